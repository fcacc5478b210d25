/* The store contract (store.h) on every backend, part one: opening a store, meta
 * settings, breaches, records and their search, statistics. Each test runs on a SQLite
 * store and, when BREACHD_TEST_PG_URI names a server, on a PostgreSQL store
 * (store_fixture.h), through store.h alone. Part two, test_store_writes_contract.c, holds
 * transactions, bulk loads, keys, erasure and the data version; cards are in
 * test_card_contract.c. What one backend promises on its own (SQLite's one snapshot per
 * read, WAL and plan memo; PostgreSQL's snapshot per search, writer lock, lost
 * connections) is tested in test_sqlite_store.c and test_pg_store.c. */
#include "record_fixture.h"

/* ---- opening ----------------------------------------------------------------------- */

TEST(test_open_without_create_reports_a_missing_store)
{
    const char *uri = missing_store_uri();
    static const int flags[] = {BD_STORE_WRITE, BD_STORE_READ, BD_STORE_WRITE};
    for (int i = 0; i < 3; i++) { /* the first attempt made nothing the next would find */
        static int sentinel;
        bd_store *s = (bd_store *)&sentinel;
        char why[512] = "";
        CHECK_INT(bd_store_open(uri, flags[i], &s, why, sizeof why), BD_ERR_NOT_FOUND);
        CHECK(s == NULL);
        CHECK(why[0] != '\0');
    }
}

TEST(test_create_makes_an_empty_store)
{
    bd_store *s = fresh();
    CHECK_INT(bd_store_ping(s), BD_OK);
    CHECK_STR(breach_list(s, 0), "");
    CHECK_STR(stats(s), "records 0, cards 0");
    CHECK_INT(key_generation(s), 0);
    char v[16];
    CHECK_INT(bd_store_meta_get(s, "marker", v, sizeof v), BD_ERR_NOT_FOUND);
    CHECK_STR(counted(s, by(BD_FIELD_EMAIL_DOMAIN, "x.example")), " /0");
}

TEST(test_opening_an_existing_store_again_changes_nothing)
{
    bd_store *s = fresh();
    const char *uri = fresh_uri();
    breaches(s);
    bd_record_in r = record(OLD, "ann@a.example", 1);
    r.password_hmac = (bd_slice){P1, 32};
    CHECK(put(s, &r));
    put_email(s, NEW, "bob@b.example", 2);
    int64_t id;
    add_key(s, "ci", 1, &id);
    CHECK_INT(bd_store_meta_set(s, "marker", "kept"), BD_OK);
    char before[4096];
    snprintf(before, sizeof before, "%s", content(s));
    CHECK_STR(before, "meta kept | keys 1 | New/20200101/0,Mid/20150101/0,Old/20100101/100 | "
                      "New=1/0;Mid=0/0;Old=1/100;records 2, cards 0 | "
                      "a.example ann@a.example /1 | 1 | b.example bob@b.example /1 | 1 | "
                      "t.example  /0 | 0 | P1 ann@a.example /1");
    close_store(s);

    bd_store *again = open_uri(uri, BD_STORE_WRITE | BD_STORE_CREATE);
    CHECK_STR(content(again), before);
    bd_store *reader = open_uri(uri, BD_STORE_READ);
    CHECK_STR(content(reader), before);
    /* a reader only reads (store.h names no result for a refused write) */
    bool ins = true;
    bd_breach_in b = {.uuid = ABSENT, .source_name = BD_SLICE_LIT("X"), .pwned_count = -1};
    CHECK(bd_store_meta_set(reader, "marker", "changed") != BD_OK);
    CHECK(bd_store_breach_put(reader, &b, &ins) != BD_OK);
    CHECK(!ins);
    CHECK_STR(content(again), before);
}

/* ---- meta -------------------------------------------------------------------------- */

TEST(test_meta_set_overwrites_and_get_reports_missing_and_too_long)
{
    bd_store *s = fresh();
    char v[8] = "";
    CHECK_INT(bd_store_meta_set(s, "k", "one"), BD_OK);
    CHECK_INT(bd_store_meta_set(s, "k", "two"), BD_OK);
    CHECK_INT(bd_store_meta_get(s, "k", v, sizeof v), BD_OK);
    CHECK_STR(v, "two");
    CHECK_INT(bd_store_meta_get(s, "missing", v, sizeof v), BD_ERR_NOT_FOUND);
    CHECK_INT(bd_store_meta_set(s, "fits", "1234567"), BD_OK); /* 7 bytes and the NUL */
    CHECK_INT(bd_store_meta_get(s, "fits", v, sizeof v), BD_OK);
    CHECK_STR(v, "1234567");
    CHECK_INT(bd_store_meta_set(s, "long", "12345678"), BD_OK);
    CHECK_INT(bd_store_meta_get(s, "long", v, sizeof v), BD_ERR_LIMIT);
    char w[9];
    CHECK_INT(bd_store_meta_get(s, "long", w, sizeof w), BD_OK);
    CHECK_STR(w, "12345678");
}

/* ---- breaches ---------------------------------------------------------------------- */

static int take_breach_fields(void *ctx, const bd_breach_row *b)
{
    (void)ctx;
    const bd_slice *f[] = {&b->uuid,          &b->source_name,         &b->site_domain,
                           &b->breach_type,   &b->site_categories,     &b->site_country,
                           &b->site_language, &b->password_types,      &b->leaked_data_types,
                           &b->description,   &b->service_article_url, &b->site_logo};
    text[0] = '\0';
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        append(text, sizeof text, *f[i]);
    size_t n = strlen(text);
    snprintf(text + n, sizeof text - n, ",%d,%lld", (int)b->date_leaked, (long long)b->pwned_count);
    return 0;
}

static const char *breach_fields(bd_store *s, const char *uuid)
{
    text[0] = '\0';
    CHECK_INT(bd_store_breach_get(s, uuid, take_breach_fields, NULL), BD_OK);
    return text;
}

TEST(test_breach_put_keeps_every_field_and_the_first_of_a_uuid)
{
    bd_store *s = fresh();
    bd_breach_in b = {.uuid = OLD,
                      .source_name = BD_SLICE_LIT("Old"),
                      .site_domain = BD_SLICE_LIT("old.example"),
                      .breach_type = BD_SLICE_LIT("combo"),
                      .site_categories = BD_SLICE_LIT("shop;forum"),
                      .site_country = BD_SLICE_LIT("CH"),
                      .site_language = BD_SLICE_LIT("de"),
                      .password_types = BD_SLICE_LIT("bcrypt"),
                      .leaked_data_types = BD_SLICE_LIT("email;password"),
                      .description = BD_SLICE_LIT("Z\xc3\xbcrich \xe2\x82\xac"),
                      .service_article_url = BD_SLICE_LIT("https://old.example/a"),
                      .site_logo = {"", 0}, /* empty, not NULL */
                      .date_leaked = 20100101,
                      .pwned_count = 100};
    bool ins = false;
    CHECK_INT(bd_store_breach_put(s, &b, &ins), BD_OK);
    CHECK(ins);
    bd_breach_in other = {.uuid = OLD, .source_name = BD_SLICE_LIT("Other"), .pwned_count = 1};
    CHECK_INT(bd_store_breach_put(s, &other, &ins), BD_OK);
    CHECK(!ins);
    CHECK_STR(breach_fields(s, OLD), OLD ",Old,old.example,combo,shop;forum,CH,de,bcrypt,"
                                         "email;password,Z\xc3\xbcrich \xe2\x82\xac,"
                                         "https://old.example/a,,20100101,100");
    put_breach(s, NEW, "New", 20200101, -1);
    CHECK_STR(breach_fields(s, NEW), NEW ",New,~,~,~,~,~,~,~,~,~,~,20200101,0");
}

TEST(test_breach_list_is_newest_first_then_by_name)
{
    bd_store *s = fresh();
    put_breach(s, OLD, "Old", 20100101, 100);
    put_breach(s, MID, "Beta", 20210505, 7);
    put_breach(s, NEW, "Alpha", 20210505, -1);
    CHECK_STR(breach_list(s, 0), "Alpha/20210505/0,Beta/20210505/7,Old/20100101/100");
    CHECK_STR(breach_list(s, -1), "Alpha/20210505/0,Beta/20210505/7,Old/20100101/100");
    CHECK_STR(breach_list(s, 2), "Alpha/20210505/0,Beta/20210505/7");
    text[0] = '\0'; /* a callback that returns non-zero stops the list */
    CHECK_INT(bd_store_breach_list(s, 0, take_breach, s), BD_OK);
    CHECK_STR(text, "Alpha/20210505/0");
}

TEST(test_breach_get_and_exists_by_uuid)
{
    bd_store *s = fresh();
    breaches(s);
    text[0] = '\0';
    CHECK_INT(bd_store_breach_get(s, MID, take_breach, NULL), BD_OK);
    CHECK_STR(text, "Mid/20150101/0");
    text[0] = '\0';
    CHECK_INT(bd_store_breach_get(s, ABSENT, take_breach, NULL), BD_ERR_NOT_FOUND);
    CHECK_STR(text, "");
    bool exists = false;
    CHECK_INT(bd_store_breach_exists(s, NEW, &exists), BD_OK);
    CHECK(exists);
    CHECK_INT(bd_store_breach_exists(s, ABSENT, &exists), BD_OK);
    CHECK(!exists);
}

TEST(test_breach_by_id_is_the_breach_of_a_record)
{
    bd_store *s = fresh();
    breaches(s);
    put_email(s, OLD, "ann@a.example", 1);
    put_email(s, NEW, "bob@a.example", 2);
    CHECK_STR(page(s, by(BD_FIELD_EMAIL_DOMAIN, "a.example")), "bob@a.example,ann@a.example");
    int64_t newest = seen.breach_id[0], oldest = seen.breach_id[1];
    text[0] = '\0';
    CHECK_INT(bd_store_breach_by_id(s, newest, take_breach, NULL), BD_OK);
    CHECK_STR(text, "New/20200101/0");
    text[0] = '\0';
    CHECK_INT(bd_store_breach_by_id(s, oldest, take_breach, NULL), BD_OK);
    CHECK_STR(text, "Old/20100101/100");
    text[0] = '\0';
    CHECK_INT(bd_store_breach_by_id(s, 999999, take_breach, NULL), BD_ERR_NOT_FOUND);
    CHECK_STR(text, "");
}

TEST(test_breach_refresh_count_counts_distinct_identities_and_keeps_an_imported_count)
{
    bd_store *s = fresh();
    breaches(s);
    put_email(s, NEW, "ann@a.example", 1);
    put_email(s, NEW, "ann@a.example", 2); /* another record, the same identity */
    put_email(s, NEW, "bob@a.example", 3);
    bd_record_in user = record(NEW, NULL, 4); /* no email: the user name stands for it */
    user.user_name = user.user_name_key = BD_SLICE_LIT("carl");
    CHECK(put(s, &user));
    bd_record_in phone = record(NEW, NULL, 5);
    phone.phone_number = BD_SLICE_LIT("+1 555 0100");
    phone.phone_key = BD_SLICE_LIT("+15550100");
    CHECK(put(s, &phone));
    put_email(s, OLD, "dan@a.example", 6);
    CHECK_STR(breach_list(s, 0), "New/20200101/0,Mid/20150101/0,Old/20100101/100");
    CHECK_INT(bd_store_breach_refresh_count(s, NEW), BD_OK);
    CHECK_INT(bd_store_breach_refresh_count(s, OLD), BD_OK);
    CHECK_STR(breach_list(s, 0), "New/20200101/4,Mid/20150101/0,Old/20100101/100");
}

TEST(test_breach_settle_count_takes_an_import_s_count_only_when_the_breach_is_all_its_own)
{
    bd_store *s = fresh();
    breaches(s);
    int64_t last = -1;
    CHECK_INT(bd_store_records_last_id(s, &last), BD_OK);
    CHECK_INT(last, 0);
    put_email(s, NEW, "ann@a.example", 1);
    put_email(s, NEW, "ann@a.example", 2);
    put_email(s, NEW, "bob@a.example", 3);
    /* every record of New is the import's: its count (a made-up 7, to tell it from a
     * recount) is taken as it is */
    bd_breach_tally t = {.inserted = 3, .identities = 7, .last_id_before = 0};
    CHECK_INT(bd_store_breach_settle_count(s, NEW, &t), BD_OK);
    CHECK_STR(breach_list(s, 0), "New/20200101/7,Mid/20150101/0,Old/20100101/100");
    /* fewer inserted than the breach holds: another writer's records too, so recounted */
    t.inserted = 2;
    CHECK_INT(bd_store_breach_settle_count(s, NEW, &t), BD_OK);
    CHECK_STR(breach_list(s, 0), "New/20200101/2,Mid/20150101/0,Old/20100101/100");
    /* records from before the import: recounted */
    CHECK_INT(bd_store_records_last_id(s, &last), BD_OK);
    CHECK(last > 0);
    put_email(s, NEW, "cat@a.example", 4);
    t = (bd_breach_tally){.inserted = 1, .identities = 1, .last_id_before = last};
    CHECK_INT(bd_store_breach_settle_count(s, NEW, &t), BD_OK);
    CHECK_STR(breach_list(s, 0), "New/20200101/3,Mid/20150101/0,Old/20100101/100");
    /* not counted (-1): recounted; an imported count stays */
    t = (bd_breach_tally){.inserted = 3, .identities = -1, .last_id_before = 0};
    CHECK_INT(bd_store_breach_settle_count(s, NEW, &t), BD_OK);
    put_email(s, OLD, "dan@a.example", 5);
    t = (bd_breach_tally){.inserted = 1, .identities = 9, .last_id_before = last + 1};
    CHECK_INT(bd_store_breach_settle_count(s, OLD, &t), BD_OK);
    CHECK_STR(breach_list(s, 0), "New/20200101/3,Mid/20150101/0,Old/20100101/100");
}

TEST(test_breach_settle_counts_decides_for_each_breach_as_one_at_a_time)
{
    /* Settled together (PostgreSQL counts the import's records once for all of them), each
     * breach gets what bd_store_breach_settle_count would give it alone. */
    bd_store *s = fresh();
    breaches(s);
    const char uuids[2][BD_UUID_LEN + 1] = {NEW, MID};
    put_email(s, NEW, "ann@a.example", 1);
    put_email(s, NEW, "ann@a.example", 2);
    put_email(s, NEW, "bob@a.example", 3);
    /* New all the import's (a made-up 7, to tell it from a recount); Mid none of it */
    bd_breach_tally t[2] = {{.inserted = 3, .identities = 7, .last_id_before = 0},
                            {.inserted = 0, .identities = 0, .last_id_before = 0}};
    CHECK_INT(bd_store_breach_settle_counts(s, uuids, t, 2), BD_OK);
    CHECK_STR(breach_list(s, 0), "New/20200101/7,Mid/20150101/0,Old/20100101/100");
    /* a later import: New holds records from before it (recounted: 3), Mid only its own
     * (its made-up 5 taken) */
    int64_t last = -1;
    CHECK_INT(bd_store_records_last_id(s, &last), BD_OK);
    put_email(s, NEW, "cat@a.example", 4);
    put_email(s, MID, "eve@a.example", 5);
    t[0] = (bd_breach_tally){.inserted = 1, .identities = 1, .last_id_before = last};
    t[1] = (bd_breach_tally){.inserted = 1, .identities = 5, .last_id_before = last};
    CHECK_INT(bd_store_breach_settle_counts(s, uuids, t, 2), BD_OK);
    CHECK_STR(breach_list(s, 0), "New/20200101/3,Mid/20150101/5,Old/20100101/100");
    /* more inserted than Mid holds (some were duplicates): recounted */
    t[1].inserted = 2;
    CHECK_INT(bd_store_breach_settle_counts(s, uuids, t, 2), BD_OK);
    CHECK_STR(breach_list(s, 0), "New/20200101/3,Mid/20150101/1,Old/20100101/100");
    /* tallies of imports begun after different ids: one at a time, the same outcome */
    t[0] = (bd_breach_tally){.inserted = 4, .identities = 8, .last_id_before = 0};
    t[1] = (bd_breach_tally){.inserted = 1, .identities = 6, .last_id_before = last};
    CHECK_INT(bd_store_breach_settle_counts(s, uuids, t, 2), BD_OK);
    CHECK_STR(breach_list(s, 0), "New/20200101/8,Mid/20150101/6,Old/20100101/100");
}

/* ---- records ----------------------------------------------------------------------- */

TEST(test_record_put_reports_duplicates_and_a_missing_breach)
{
    bd_store *s = fresh();
    breaches(s);
    bd_record_in r = record(OLD, "ann@a.example", 1);
    CHECK(put(s, &r));
    CHECK(!put(s, &r));
    bd_record_in orphan = record(ABSENT, "bob@a.example", 2);
    bool ins = true;
    CHECK_INT(bd_store_record_put(s, &orphan, &ins), BD_ERR_NOT_FOUND);
    CHECK(!ins);
    CHECK_STR(counted(s, by(BD_FIELD_EMAIL_DOMAIN, "a.example")), "ann@a.example /1");
    CHECK_STR(stats(s), "New=0/0;Mid=0/0;Old=1/100;records 1, cards 0");
}

static int take_values(void *ctx, const bd_record_row *row)
{
    (void)ctx;
    const bd_slice *f[] = {&row->user_name,     &row->first_name,      &row->last_name,
                           &row->email,         &row->email_domain,    &row->phone_number,
                           &row->ip_address,    &row->bitcoin_address, &row->password_masked,
                           &row->password_hash, &row->ssn_masked,      &row->other_attributes};
    size_t n = strlen(text);
    snprintf(text + n, sizeof text - n, "%s", n ? "\n" : "");
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        bd_slice v = f[i]->ptr ? *f[i] : BD_SLICE_LIT("~");
        n = strlen(text);
        snprintf(text + n, sizeof text - n, "%.*s|", (int)v.len, v.ptr);
    }
    n = strlen(text);
    snprintf(text + n, sizeof text - n, "%d|%d", (int)row->severity, (int)row->breach_date);
    return 0;
}

TEST(test_record_values_come_back_as_put)
{
    bd_store *s = fresh();
    breaches(s);
    bd_record_in r = record(MID, "sam@s.example", 1);
    r.user_name = BD_SLICE_LIT("Sam\tS\\");
    r.first_name = (bd_slice){"", 0}; /* empty, not NULL */
    r.phone_number = BD_SLICE_LIT("\\N");
    r.ip_address = BD_SLICE_LIT("192.0.2.7");
    r.bitcoin_address = BD_SLICE_LIT("1BoatSLRHtKNngkdXEeobR76b53LETtpyT");
    r.password_masked = BD_SLICE_LIT("p*****d");
    r.password_hash = BD_SLICE_LIT("5f4dcc3b5aa765d61d8327deb882cf99");
    r.ssn_masked = BD_SLICE_LIT("***-**-6789\r\n");
    r.other_attributes = BD_SLICE_LIT("{\"city\":\"Z\xc3\xbcrich \xf0\x9f\x98\x80\"}");
    r.severity = BD_SEVERITY_HIGH;
    CHECK(put(s, &r));
    put_email(s, OLD, "tom@s.example", 2);
    text[0] = '\0';
    CHECK_INT(bd_store_record_search(s,
                                     &(bd_record_query){.field = BD_FIELD_EMAIL_DOMAIN,
                                                        .key = BD_SLICE_LIT("s.example"),
                                                        .limit = 10},
                                     take_values, NULL, NULL),
              BD_OK);
    CHECK_STR(text, "Sam\tS\\||~|sam@s.example|s.example|\\N|192.0.2.7|"
                    "1BoatSLRHtKNngkdXEeobR76b53LETtpyT|p*****d|5f4dcc3b5aa765d61d8327deb882cf99|"
                    "***-**-6789\r\n|{\"city\":\"Z\xc3\xbcrich \xf0\x9f\x98\x80\"}|3|20150101\n"
                    "~|~|~|tom@s.example|s.example|~|~|~|~|~|~|~|1|20100101");
}

TEST(test_record_search_finds_each_field_by_its_lookup_key)
{
    bd_store *s = fresh();
    breaches(s);
    static const char ssn[32] = "ssn-hmac\0\x01\x02\xff-32-bytes-long-----";
    bd_record_in full = record(NEW, "full@k.example", 1);
    full.user_name = BD_SLICE_LIT("Full User");
    full.user_name_key = BD_SLICE_LIT("full user");
    full.phone_number = BD_SLICE_LIT("+41 44 555 01 00");
    full.phone_key = BD_SLICE_LIT("+41445550100");
    full.ip_address = BD_SLICE_LIT("2001:db8::1");
    full.ssn_hmac = (bd_slice){ssn, 32};
    full.password_hmac = (bd_slice){P2, 32};
    full.password_hash = BD_SLICE_LIT("$2b$10$abcdefghijklmnopqrstuv");
    full.bitcoin_address = BD_SLICE_LIT("bc1qexample");
    CHECK(put(s, &full));
    put_email(s, OLD, "bare@k.example", 2);
    const struct {
        bd_field field;
        bd_slice key;
    } keys[] = {
        {BD_FIELD_EMAIL, BD_SLICE_LIT("full@k.example")},
        {BD_FIELD_PHONE, BD_SLICE_LIT("+41445550100")},
        {BD_FIELD_USERNAME, BD_SLICE_LIT("full user")},
        {BD_FIELD_IP, BD_SLICE_LIT("2001:db8::1")},
        {BD_FIELD_SSN, {ssn, 32}},
        {BD_FIELD_PASSWORD, {P2, 32}},
        {BD_FIELD_PASSWORD_HASH, BD_SLICE_LIT("$2b$10$abcdefghijklmnopqrstuv")},
        {BD_FIELD_BITCOIN, BD_SLICE_LIT("bc1qexample")},
    };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        bd_record_query q = by_bytes(keys[i].field, keys[i].key.ptr, keys[i].key.len);
        const char *got = counted(s, q);
        if (strcmp(got, "full@k.example /1") != 0)
            TEST_FAIL("field %d: \"%s\", want \"full@k.example /1\"", (int)keys[i].field, got);
    }
    CHECK_STR(counted(s, by(BD_FIELD_EMAIL_DOMAIN, "k.example")),
              "full@k.example,bare@k.example /2");
    /* the lookup key, not the display text; all of a key's bytes */
    CHECK_STR(counted(s, by(BD_FIELD_PHONE, "+41 44 555 01 00")), " /0");
    CHECK_STR(counted(s, by_bytes(BD_FIELD_SSN, ssn, 8)), " /0");
}

/* Five records of x.example: a, c in Old (2010); e in Mid (2015); b, d in New (2020), put
 * in the order a, b, c, d, e. */
static void five_records(bd_store *s)
{
    breaches(s);
    put_email(s, OLD, "a@x.example", 1);
    put_email(s, NEW, "b@x.example", 2);
    put_email(s, OLD, "c@x.example", 3);
    put_email(s, NEW, "d@x.example", 4);
    put_email(s, MID, "e@x.example", 5);
}

TEST(test_record_search_is_newest_breach_first_then_latest_record_first)
{
    bd_store *s = fresh();
    five_records(s);
    CHECK_STR(page(s, by(BD_FIELD_EMAIL_DOMAIN, "x.example")),
              "d@x.example,b@x.example,e@x.example,c@x.example,a@x.example");
    CHECK_STR(seen.dates, "20200101,20200101,20150101,20100101,20100101");
}

TEST(test_record_search_pages_from_a_keyset_position)
{
    bd_store *s = fresh();
    five_records(s);
    bd_record_query q = by(BD_FIELD_EMAIL_DOMAIN, "x.example");
    q.limit = 2;
    const char *want[] = {"d@x.example,b@x.example", "e@x.example,c@x.example", "a@x.example", ""};
    for (int i = 0; i < 4; i++) {
        CHECK_STR(page(s, q), want[i]);
        q.has_after = true; /* the next page starts after the last row of this one */
        if (seen.rows) {
            q.after_date = seen.last_date;
            q.after_id = seen.last_id;
        }
    }
    /* a position between two records of one breach date */
    CHECK_STR(page(s, by(BD_FIELD_EMAIL, "d@x.example")), "d@x.example");
    q.after_date = seen.last_date;
    q.after_id = seen.last_id;
    q.limit = 100;
    CHECK_STR(page(s, q), "b@x.example,e@x.example,c@x.example,a@x.example");
}

/* Records of a.example: a1 (Old, P1), a2 (New, no password), a3 (Mid, P1), a4 (New, P2 and
 * a phone); b1@b.example (Old, P1). */
static void filter_records(bd_store *s)
{
    breaches(s);
    const struct {
        const char *breach, *email, *pw;
        bool phone;
    } rows[] = {{OLD, "a1@a.example", P1, false},
                {NEW, "a2@a.example", NULL, false},
                {MID, "a3@a.example", P1, false},
                {NEW, "a4@a.example", P2, true},
                {OLD, "b1@b.example", P1, false}};
    for (int i = 0; i < 5; i++) {
        bd_record_in r = record(rows[i].breach, rows[i].email, i + 1);
        if (rows[i].pw)
            r.password_hmac = (bd_slice){rows[i].pw, 32};
        if (rows[i].phone)
            r.phone_number = r.phone_key = BD_SLICE_LIT("+15550104");
        CHECK(put(s, &r));
    }
}

static bd_record_query filtered(bd_field f, bd_filter_mode mode, const char *key)
{
    bd_record_query q = by(BD_FIELD_EMAIL_DOMAIN, "a.example");
    q.filter[f].mode = mode;
    if (key)
        q.filter[f].key = (bd_slice){key, 32};
    return q;
}

TEST(test_record_search_filters_on_present_absent_and_equal_values)
{
    bd_store *s = fresh();
    filter_records(s);
    CHECK_STR(counted(s, filtered(BD_FIELD_PASSWORD, BD_FILTER_PRESENT, NULL)),
              "a4@a.example,a3@a.example,a1@a.example /3");
    CHECK_STR(counted(s, filtered(BD_FIELD_PASSWORD, BD_FILTER_ABSENT, NULL)), "a2@a.example /1");
    CHECK_STR(counted(s, filtered(BD_FIELD_PASSWORD, BD_FILTER_EQUALS, P1)),
              "a3@a.example,a1@a.example /2");
    CHECK_STR(counted(s, filtered(BD_FIELD_PASSWORD, BD_FILTER_EQUALS, P2)), "a4@a.example /1");
    CHECK_STR(counted(s, filtered(BD_FIELD_PHONE, BD_FILTER_PRESENT, NULL)), "a4@a.example /1");
    bd_record_query both = filtered(BD_FIELD_PASSWORD, BD_FILTER_EQUALS, P1);
    both.filter[BD_FIELD_PHONE].mode = BD_FILTER_ABSENT;
    CHECK_STR(counted(s, both), "a3@a.example,a1@a.example /2");
    both.filter[BD_FIELD_PHONE].mode = BD_FILTER_PRESENT;
    CHECK_STR(counted(s, both), " /0");
    CHECK_STR(counted(s, by_bytes(BD_FIELD_PASSWORD, P1, 32)),
              "a3@a.example,b1@b.example,a1@a.example /3");
    bd_record_query pw = by_bytes(BD_FIELD_PASSWORD, P1, 32);
    pw.filter[BD_FIELD_EMAIL_DOMAIN].mode = BD_FILTER_EQUALS;
    pw.filter[BD_FIELD_EMAIL_DOMAIN].key = BD_SLICE_LIT("b.example");
    CHECK_STR(counted(s, pw), "b1@b.example /1");
}

TEST(test_record_search_found_counts_every_match_whatever_the_page)
{
    bd_store *s = fresh();
    filter_records(s);
    bd_record_query q = filtered(BD_FIELD_PASSWORD, BD_FILTER_PRESENT, NULL);
    const char *want[] = {"", "a4@a.example /3", "a4@a.example,a3@a.example /3",
                          "a4@a.example,a3@a.example,a1@a.example /3",
                          "a4@a.example,a3@a.example,a1@a.example /3"};
    for (int limit = 1; limit <= 4; limit++) { /* a page short of, as big as, past the matches */
        q.limit = limit;
        CHECK_STR(counted(s, q), want[limit]);
    }
    CHECK_STR(counted(s, by(BD_FIELD_EMAIL, "nobody@a.example")), " /0");
    CHECK_INT(seen.rows, 0);
}

static int take_one_then_stop(void *ctx, const bd_record_row *row)
{
    take_record(ctx, row);
    return 1;
}

/* However a backend counts a first page's matches (SQLite: the page itself when it is not
 * full, else a count statement), the count is exact for any number of them, and the callback
 * still gets no more than the page, or than it took. */
TEST(test_record_search_found_is_exact_whatever_the_number_of_matches)
{
    bd_store *s = fresh();
    breaches(s);
    const int marks[] = {1, 2, 3, 4, 9, 10, 11, 12, 40, 200};
    int n = 0;
    for (size_t m = 0; m < sizeof marks / sizeof *marks; m++) {
        for (; n < marks[m]; n++) {
            bd_record_in r = record(n % 2 ? OLD : NEW, "many@m.example", n + 1);
            CHECK(put(s, &r));
        }
        for (int limit = 1; limit <= 3; limit++) {
            bd_record_query q = by(BD_FIELD_EMAIL, "many@m.example");
            q.limit = limit;
            int64_t got = -1;
            memset(&seen, 0, sizeof seen);
            CHECK_INT(bd_store_record_search(s, &q, take_record, NULL, &got), BD_OK);
            CHECK_INT(got, n);
            CHECK_INT(seen.rows, n < limit ? n : limit);
            got = -1;
            memset(&seen, 0, sizeof seen);
            CHECK_INT(bd_store_record_search(s, &q, take_one_then_stop, NULL, &got), BD_OK);
            CHECK_INT(got, n);
            CHECK_INT(seen.rows, 1);
        }
    }
}

TEST(test_record_search_found_for_a_whole_domain_counts_each_record_once)
{
    bd_store *s = fresh();
    five_records(s);
    bd_record_in dup = record(OLD, "a@x.example", 1);
    CHECK(!put(s, &dup));
    put_email(s, OLD, "z@y.example", 6);
    bd_record_query q = by(BD_FIELD_EMAIL_DOMAIN, "x.example");
    q.limit = 2;
    CHECK_STR(counted(s, q), "d@x.example,b@x.example /5");
    CHECK_INT(domain_found(s, "x.example"), 5);
    CHECK_INT(domain_found(s, "y.example"), 1);
    CHECK_INT(domain_found(s, "none.example"), 0);
    q.filter[BD_FIELD_BITCOIN].mode = BD_FILTER_ABSENT; /* counted by a query, not per domain */
    CHECK_STR(counted(s, q), "d@x.example,b@x.example /5");
}

TEST(test_record_search_found_with_a_keyset_position_is_invalid)
{
    bd_store *s = fresh();
    five_records(s);
    bd_record_query q = by(BD_FIELD_EMAIL_DOMAIN, "x.example");
    q.has_after = true;
    q.after_date = 20200101;
    q.after_id = 1;
    int64_t n = 42;
    memset(&seen, 0, sizeof seen);
    CHECK_INT(bd_store_record_search(s, &q, take_record, NULL, &n), BD_ERR_INVALID);
    CHECK_INT(seen.rows, 0);
}

/* ---- statistics -------------------------------------------------------------------- */

TEST(test_stats_count_records_per_breach_newest_first_and_in_total)
{
    bd_store *s = fresh();
    filter_records(s);
    put_breach(s, ABSENT, "Alpha", 20150101, 3); /* Mid's date: by name */
    CHECK_INT(bd_store_breach_refresh_count(s, NEW), BD_OK);
    CHECK_STR(stats(s), "New=2/2;Alpha=0/3;Mid=1/0;Old=2/100;records 5, cards 0");
}

static void suite(void)
{
    RUN_CONTRACT(test_open_without_create_reports_a_missing_store);
    RUN_CONTRACT(test_create_makes_an_empty_store);
    RUN_CONTRACT(test_opening_an_existing_store_again_changes_nothing);
    RUN_CONTRACT(test_meta_set_overwrites_and_get_reports_missing_and_too_long);
    RUN_CONTRACT(test_breach_put_keeps_every_field_and_the_first_of_a_uuid);
    RUN_CONTRACT(test_breach_list_is_newest_first_then_by_name);
    RUN_CONTRACT(test_breach_get_and_exists_by_uuid);
    RUN_CONTRACT(test_breach_by_id_is_the_breach_of_a_record);
    RUN_CONTRACT(test_breach_refresh_count_counts_distinct_identities_and_keeps_an_imported_count);
    RUN_CONTRACT(test_breach_settle_count_takes_an_import_s_count_only_when_the_breach_is_all_its_own);
    RUN_CONTRACT(test_breach_settle_counts_decides_for_each_breach_as_one_at_a_time);
    RUN_CONTRACT(test_record_put_reports_duplicates_and_a_missing_breach);
    RUN_CONTRACT(test_record_values_come_back_as_put);
    RUN_CONTRACT(test_record_search_finds_each_field_by_its_lookup_key);
    RUN_CONTRACT(test_record_search_is_newest_breach_first_then_latest_record_first);
    RUN_CONTRACT(test_record_search_pages_from_a_keyset_position);
    RUN_CONTRACT(test_record_search_filters_on_present_absent_and_equal_values);
    RUN_CONTRACT(test_record_search_found_counts_every_match_whatever_the_page);
    RUN_CONTRACT(test_record_search_found_is_exact_whatever_the_number_of_matches);
    RUN_CONTRACT(test_record_search_found_for_a_whole_domain_counts_each_record_once);
    RUN_CONTRACT(test_record_search_found_with_a_keyset_position_is_invalid);
    RUN_CONTRACT(test_stats_count_records_per_breach_newest_first_and_in_total);
}

int main(void)
{
    return fx_main(suite);
}
