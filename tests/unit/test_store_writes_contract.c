/* The store contract (store.h) on every backend, part two: transactions of batched writes,
 * bulk loads, API keys, erasure and the data version. Each test runs on a SQLite store and,
 * when BREACHD_TEST_PG_URI names a server, on a PostgreSQL store (store_fixture.h), through
 * store.h alone. Part one is test_store_contract.c. */
#include "record_fixture.h"

/* ---- batched writes and bulk loads ------------------------------------------------- */

/* Puts r; counts a duplicate the backend reports at once into *dups. */
static void put_counting(bd_store *s, const char *breach, const char *email, int n, int *dups)
{
    bd_record_in r = record(breach, email, n);
    if (!put(s, &r))
        ++*dups;
}

TEST(test_batch_commit_lands_every_write_and_counts_each_duplicate_once)
{
    bd_store *s = fresh();
    put_breach(s, OLD, "Old", 20100101, 100);
    put_email(s, OLD, "a1@t.example", 1);
    int dups = 0;
    CHECK_INT(bd_store_begin(s), BD_OK);
    put_breach(s, NEW, "New", 20200101, -1);
    put_counting(s, NEW, "b1@t.example", 2, &dups);
    put_counting(s, NEW, "b2@t.example", 3, &dups);
    put_counting(s, NEW, "b1@t.example", 2, &dups); /* twice in the batch */
    put_counting(s, OLD, "a1@t.example", 1, &dups); /* stored before */
    put_counting(s, OLD, "b3@t.example", 4, &dups);
    CHECK_INT(bd_store_meta_set(s, "batch", "1"), BD_OK);
    CHECK_INT(bd_store_commit(s), BD_OK);
    /* some at the put (SQLite), some at the commit (PostgreSQL): each one once */
    CHECK_INT(dups + bd_store_take_late_duplicates(s), 2);
    CHECK_INT(bd_store_take_late_duplicates(s), 0);
    CHECK_STR(counted(s, by(BD_FIELD_EMAIL_DOMAIN, "t.example")),
              "b2@t.example,b1@t.example,b3@t.example,a1@t.example /4");
    CHECK_INT(domain_found(s, "t.example"), 4);
    char v[4];
    CHECK_INT(bd_store_meta_get(s, "batch", v, sizeof v), BD_OK);
    CHECK_STR(v, "1");
    CHECK_STR(stats(s), "New=2/0;Old=2/100;records 4, cards 0");
}

TEST(test_batch_rollback_leaves_nothing)
{
    bd_store *s = fresh();
    put_breach(s, OLD, "Old", 20100101, 100);
    put_email(s, OLD, "a1@t.example", 1);
    char before[4096];
    snprintf(before, sizeof before, "%s", content(s));
    CHECK_INT(bd_store_begin(s), BD_OK);
    put_breach(s, NEW, "New", 20200101, -1);
    put_email(s, NEW, "b1@t.example", 2);
    put_email(s, OLD, "b2@t.example", 3);
    bd_record_in dup = record(OLD, "a1@t.example", 1);
    put(s, &dup); /* found at the put or at the commit: none is left late by a rollback */
    int64_t id;
    add_key(s, "rolled back", 9, &id);
    CHECK_INT(bd_store_meta_set(s, "marker", "rolled back"), BD_OK);
    bd_store_rollback(s);
    CHECK_INT(bd_store_take_late_duplicates(s), 0);
    CHECK_STR(content(s), before);
    bool exists = true;
    CHECK_INT(bd_store_breach_exists(s, NEW, &exists), BD_OK);
    CHECK(!exists);
}

/* store.h: a record put naming a breach that does not exist is BD_ERR_NOT_FOUND, also when
 * the breach was put in a transaction that was rolled back (the breach cache of record
 * puts must not keep it: SQLite's did, until e3f743b). */
TEST(test_record_put_after_its_breach_was_rolled_back_reports_the_missing_breach)
{
    bd_store *s = fresh();
    CHECK_INT(bd_store_begin(s), BD_OK);
    put_breach(s, NEW, "New", 20200101, -1);
    put_email(s, NEW, "b1@t.example", 1);
    bd_store_rollback(s);
    bd_record_in r = record(NEW, "b2@t.example", 2);
    bool ins = true;
    CHECK_INT(bd_store_record_put(s, &r, &ins), BD_ERR_NOT_FOUND);
    CHECK(!ins);
    CHECK_STR(stats(s), "records 0, cards 0");
}

/* The same, when another handle of the store erased the breach, for a put of its own and a
 * put in a batch: neither schema enforces the foreign key, so a stale breach cache stored
 * a record of no breach on both backends until e3f743b. */
TEST(test_record_put_after_another_handle_erased_its_breach_reports_the_missing_breach)
{
    bd_store *s = fresh();
    bd_store *eraser = open_uri(fresh_uri(), BD_STORE_WRITE);
    put_breach(s, NEW, "New", 20200101, -1);
    put_email(s, NEW, "b1@t.example", 1);
    int64_t removed = -1;
    CHECK_INT(bd_store_erase_breach(eraser, NEW, &removed), BD_OK);
    CHECK_INT(removed, 1);
    bd_record_in r = record(NEW, "b2@t.example", 2);
    bool ins = true;
    CHECK_INT(bd_store_record_put(s, &r, &ins), BD_ERR_NOT_FOUND);
    CHECK(!ins);
    CHECK_STR(stats(s), "records 0, cards 0");
    put_breach(s, NEW, "New", 20200101, -1); /* cached again, then erased again */
    put_email(s, NEW, "b3@t.example", 3);
    CHECK_INT(bd_store_erase_breach(eraser, NEW, &removed), BD_OK);
    CHECK_INT(bd_store_begin(s), BD_OK);
    ins = true;
    CHECK_INT(bd_store_record_put(s, &r, &ins), BD_ERR_NOT_FOUND);
    CHECK(!ins);
    CHECK_INT(bd_store_commit(s), BD_OK);
    CHECK_STR(stats(s), "records 0, cards 0");
}

TEST(test_bulk_begin_outside_a_transaction_is_invalid)
{
    bd_store *s = fresh();
    CHECK_INT(bd_store_bulk_begin(s, BD_BULK_RECORDS), BD_ERR_INVALID);
    CHECK_INT(bd_store_bulk_begin(s, BD_BULK_CARDS), BD_ERR_INVALID);
    breaches(s); /* the store is as it was: puts keep the lookup indexes and counts */
    put_email(s, OLD, "a1@a.example", 1);
    CHECK_STR(counted(s, by(BD_FIELD_EMAIL, "a1@a.example")), "a1@a.example /1");
    CHECK_INT(domain_found(s, "a.example"), 1);
}

/* Loads the same records, duplicates among them, in one transaction: with bulk_begin and
 * bulk_end around the puts, or without. Returns the duplicates reported (5). Before the
 * load: a1@a.example in Old. The load: record i (2 to 24) is <d><i>@<d>.example, d the
 * i % 3rd of a, b, t; in Old, Mid or New as i / 2 % 3 is 0, 1 or 2; with password P1
 * when i % 4 == 0; put twice when i % 5 == 0; then a1@a.example again. */
static int load(bd_store *s, bool bulk)
{
    breaches(s);
    put_email(s, OLD, "a1@a.example", 1); /* stored before the load */
    CHECK_INT(bd_store_begin(s), BD_OK);
    if (bulk)
        CHECK_INT(bd_store_bulk_begin(s, BD_BULK_RECORDS), BD_OK);
    int dups = 0;
    static const char *const breach[] = {OLD, MID, NEW};
    for (int i = 2; i <= 24; i++) {
        char email[32];
        snprintf(email, sizeof email, "%c%d@%c.example", "abt"[i % 3], i, "abt"[i % 3]);
        bd_record_in r = record(breach[i / 2 % 3], email, i);
        if (i % 4 == 0)
            r.password_hmac = (bd_slice){P1, 32};
        if (!put(s, &r))
            dups++;
        if (i % 5 == 0 && !put(s, &r)) /* again, in the same load */
            dups++;
    }
    put_counting(s, OLD, "a1@a.example", 1, &dups);
    if (bulk)
        CHECK_INT(bd_store_bulk_end(s, BD_BULK_RECORDS), BD_OK);
    CHECK_INT(bd_store_commit(s), BD_OK);
    CHECK_INT(bd_store_breach_refresh_count(s, MID), BD_OK);
    CHECK_INT(bd_store_breach_refresh_count(s, NEW), BD_OK);
    return dups + (int)bd_store_take_late_duplicates(s);
}

TEST(test_bulk_record_load_gives_the_content_of_a_plain_load)
{
    bd_store *plain = fresh();
    bd_store *bulk = fresh();
    CHECK_INT(load(plain, false), 5);
    CHECK_INT(load(bulk, true), 5);
    char want[4096];
    snprintf(want, sizeof want, "%s", content(plain));
    CHECK_STR(want, "meta ~ | keys 0 | New/20200101/8,Mid/20150101/8,Old/20100101/100 | "
                    "New=8/8;Mid=8/8;Old=8/100;records 24, cards 0 | "
                    "a.example a21@a.example,a15@a.example,a9@a.example,a3@a.example,"
                    "a24@a.example,a18@a.example,a12@a.example,a6@a.example,a1@a.example /9 | 9 | "
                    "b.example b22@b.example,b16@b.example,b10@b.example,b4@b.example,"
                    "b19@b.example,b13@b.example,b7@b.example /7 | 7 | "
                    "t.example t23@t.example,t17@t.example,t11@t.example,t5@t.example,"
                    "t20@t.example,t14@t.example,t8@t.example,t2@t.example /8 | 8 | "
                    "P1 b16@b.example,b4@b.example,t20@t.example,t8@t.example,a24@a.example,"
                    "a12@a.example /6");
    CHECK_STR(content(bulk), want);
}

/* ---- keys -------------------------------------------------------------------------- */

static int take_key(void *ctx, const bd_key_row *k)
{
    (void)ctx;
    size_t n = strlen(text);
    int same = 1; /* every byte of the hash is the tag the key was made with */
    for (int i = 1; i < 32; i++)
        same &= k->hash[i] == k->hash[0];
    snprintf(text + n, sizeof text - n, "%lld:%.*s:%.*s:%d%s:%lld/h:%lld/d:%lld:%lld:%lld;",
             (long long)k->id, (int)k->name.len, k->name.ptr, (int)k->plan.len, k->plan.ptr,
             k->hash[0], same ? "" : "?", (long long)k->rate_per_hour, (long long)k->exact_per_day,
             (long long)k->created_at, (long long)k->expires_at, (long long)k->revoked_at);
    return 0;
}

static const char *key_list(bd_store *s)
{
    text[0] = '\0';
    CHECK_INT(bd_store_key_list(s, take_key, NULL), BD_OK);
    return text;
}

TEST(test_keys_add_list_revoke_and_move_the_generation)
{
    bd_store *s = fresh();
    int64_t g0 = key_generation(s), id1 = 0, id2 = 0;
    bd_key_row k = {.name = BD_SLICE_LIT("ci"),
                    .plan = BD_SLICE_LIT("standard"),
                    .rate_per_hour = 1000,
                    .exact_per_day = 0,
                    .created_at = 1700000000};
    memset(k.hash, 7, sizeof k.hash);
    CHECK_INT(bd_store_key_add(s, &k, &id1), BD_OK);
    CHECK_INT(key_generation(s), g0 + 1);
    k.name = BD_SLICE_LIT("bulk");
    k.plan = BD_SLICE_LIT("enterprise");
    k.rate_per_hour = 50000;
    k.exact_per_day = 200;
    k.expires_at = 1800000000;
    memset(k.hash, 200, sizeof k.hash);
    CHECK_INT(bd_store_key_add(s, &k, &id2), BD_OK);
    CHECK(id2 > id1);
    CHECK_INT(key_generation(s), g0 + 2);
    CHECK_INT(bd_store_key_revoke(s, id1, 1700000500), BD_OK);
    CHECK_INT(key_generation(s), g0 + 3);
    CHECK_INT(bd_store_key_revoke(s, id1, 1700000600), BD_ERR_NOT_FOUND); /* revoked already */
    CHECK_INT(bd_store_key_revoke(s, id2 + 100, 1700000600), BD_ERR_NOT_FOUND);
    CHECK_INT(key_generation(s), g0 + 3);
    char want[256];
    snprintf(want, sizeof want,
             "%lld:ci:standard:7:1000/h:0/d:1700000000:0:1700000500;"
             "%lld:bulk:enterprise:200:50000/h:200/d:1700000000:1800000000:0;",
             (long long)id1, (long long)id2);
    CHECK_STR(key_list(s), want);
}

TEST(test_key_with_the_hash_of_a_stored_key_is_refused)
{
    bd_store *s = fresh();
    int64_t id = 0, again = -1;
    add_key(s, "first", 3, &id);
    int64_t g = key_generation(s);
    bd_key_row k = {.name = BD_SLICE_LIT("second"), .plan = BD_SLICE_LIT("standard")};
    memset(k.hash, 3, sizeof k.hash);
    CHECK_INT(bd_store_key_add(s, &k, &again), BD_ERR_EXISTS);
    CHECK_INT(key_generation(s), g);
    char want[128];
    snprintf(want, sizeof want, "%lld:first:standard:3:1000/h:20/d:1700000000:0:0;", (long long)id);
    CHECK_STR(key_list(s), want);
}

/* ---- erasure ----------------------------------------------------------------------- */

TEST(test_erase_email_reports_each_breach_and_moves_the_domain_counts)
{
    bd_store *s = fresh();
    breaches(s);
    put_email(s, OLD, "ann@a.example", 1);
    put_email(s, NEW, "ann@a.example", 2);
    put_email(s, NEW, "ann@a.example", 3);
    put_email(s, NEW, "bob@a.example", 4);
    put_email(s, MID, "cat@c.example", 5);
    CHECK_INT(bd_store_breach_refresh_count(s, NEW), BD_OK);
    CHECK_STR(breach_list(s, 0), "New/20200101/2,Mid/20150101/0,Old/20100101/100");
    int64_t removed = -1;
    text[0] = '\0';
    CHECK_INT(bd_store_erase_email(s, "ann@a.example", take_stats, NULL, &removed), BD_OK);
    CHECK_INT(removed, 3);
    CHECK_STR(text, "New=2/0;Old=1/0;");
    CHECK_STR(counted(s, by(BD_FIELD_EMAIL, "ann@a.example")), " /0");
    CHECK_INT(domain_found(s, "a.example"), 1);
    CHECK_INT(domain_found(s, "c.example"), 1);
    CHECK_STR(breach_list(s, 0), "New/20200101/1,Mid/20150101/0,Old/20100101/100");
    text[0] = '\0';
    CHECK_INT(bd_store_erase_email(s, "nobody@a.example", take_stats, NULL, &removed), BD_OK);
    CHECK_INT(removed, 0);
    CHECK_STR(text, "");
}

TEST(test_erase_breach_removes_its_records_and_moves_the_domain_counts)
{
    bd_store *s = fresh();
    breaches(s);
    put_email(s, NEW, "ann@a.example", 1);
    put_email(s, NEW, "bob@b.example", 2);
    put_email(s, OLD, "cat@a.example", 3);
    int64_t removed = -1;
    CHECK_INT(bd_store_erase_breach(s, NEW, &removed), BD_OK);
    CHECK_INT(removed, 2);
    CHECK_STR(breach_list(s, 0), "Mid/20150101/0,Old/20100101/100");
    CHECK_STR(counted(s, by(BD_FIELD_EMAIL_DOMAIN, "a.example")), "cat@a.example /1");
    CHECK_INT(domain_found(s, "a.example"), 1);
    CHECK_STR(stats(s), "Mid=0/0;Old=1/100;records 1, cards 0");
    removed = -1;
    CHECK_INT(bd_store_erase_breach(s, NEW, &removed), BD_ERR_NOT_FOUND);
    CHECK_INT(removed, 0);
    bd_record_in r = record(NEW, "dan@a.example", 4);
    bool ins = true;
    CHECK_INT(bd_store_record_put(s, &r, &ins), BD_ERR_NOT_FOUND);
}

/* A domain count that erasure brought to zero starts again from zero, not from a stale
 * count, when the domain has records again. */
TEST(test_a_domain_emptied_by_erasure_counts_from_zero_again)
{
    bd_store *s = fresh();
    breaches(s);
    put_email(s, NEW, "ann@e.example", 1);
    put_email(s, OLD, "bob@e.example", 2);
    int64_t removed;
    CHECK_INT(bd_store_erase_email(s, "ann@e.example", take_stats, NULL, &removed), BD_OK);
    CHECK_INT(bd_store_erase_breach(s, OLD, &removed), BD_OK);
    CHECK_INT(domain_found(s, "e.example"), 0);
    put_email(s, MID, "cat@e.example", 3);
    CHECK_INT(domain_found(s, "e.example"), 1);
}

/* ---- data version ------------------------------------------------------------------ */

/* The data version of one read of r that runs a search of domain. */
static uint64_t read_version(bd_store *r, const char *domain, int64_t *n)
{
    CHECK_INT(bd_store_read_begin(r), BD_OK);
    *n = domain_found(r, domain);
    uint64_t v = bd_store_data_version(r);
    bd_store_read_end(r);
    return v;
}

TEST(test_data_version_holds_until_another_handle_commits)
{
    bd_store *w = fresh();
    breaches(w);
    put_email(w, NEW, "ann@d.example", 1);
    bd_store *r = open_uri(fresh_uri(), BD_STORE_READ);
    int64_t n = -1;
    uint64_t v1 = read_version(r, "d.example", &n);
    CHECK_INT(n, 1);
    CHECK(read_version(r, "d.example", &n) == v1); /* nothing changed */
    CHECK_INT(n, 1);
    put_email(w, OLD, "bob@d.example", 2);
    uint64_t v2 = read_version(r, "d.example", &n);
    CHECK_INT(n, 2);
    CHECK(v2 != v1);
    CHECK(read_version(r, "d.example", &n) == v2);
    CHECK_INT(n, 2);
}

/* Inside a read the data version is the one its search read at, whatever commits after it;
 * the next read's search reports the newer one. */
TEST(test_data_version_inside_a_read_is_what_its_search_read)
{
    bd_store *w = fresh();
    breaches(w);
    put_email(w, NEW, "ann@d.example", 1);
    bd_store *r = open_uri(fresh_uri(), BD_STORE_READ);
    CHECK_INT(bd_store_read_begin(r), BD_OK);
    CHECK_STR(counted(r, by(BD_FIELD_EMAIL_DOMAIN, "d.example")), "ann@d.example /1");
    uint64_t v = bd_store_data_version(r);
    put_email(w, OLD, "bob@d.example", 2);
    CHECK(bd_store_data_version(r) == v);
    bd_store_read_end(r);
    CHECK_INT(bd_store_read_begin(r), BD_OK);
    CHECK_STR(counted(r, by(BD_FIELD_EMAIL_DOMAIN, "d.example")), "ann@d.example,bob@d.example /2");
    CHECK(bd_store_data_version(r) != v);
    bd_store_read_end(r);
}

static void suite(void)
{
    RUN_CONTRACT(test_batch_commit_lands_every_write_and_counts_each_duplicate_once);
    RUN_CONTRACT(test_batch_rollback_leaves_nothing);
    RUN_CONTRACT(test_record_put_after_its_breach_was_rolled_back_reports_the_missing_breach);
    RUN_CONTRACT(test_record_put_after_another_handle_erased_its_breach_reports_the_missing_breach);
    RUN_CONTRACT(test_bulk_begin_outside_a_transaction_is_invalid);
    RUN_CONTRACT(test_bulk_record_load_gives_the_content_of_a_plain_load);
    RUN_CONTRACT(test_keys_add_list_revoke_and_move_the_generation);
    RUN_CONTRACT(test_key_with_the_hash_of_a_stored_key_is_refused);
    RUN_CONTRACT(test_erase_email_reports_each_breach_and_moves_the_domain_counts);
    RUN_CONTRACT(test_erase_breach_removes_its_records_and_moves_the_domain_counts);
    RUN_CONTRACT(test_a_domain_emptied_by_erasure_counts_from_zero_again);
    RUN_CONTRACT(test_data_version_holds_until_another_handle_commits);
    RUN_CONTRACT(test_data_version_inside_a_read_is_what_its_search_read);
}

int main(void)
{
    return fx_main(suite);
}
