/* The store contract (store.h) for cards, on every backend: each test runs on a SQLite store
 * and, when BREACHD_TEST_PG_URI names a server, on a PostgreSQL store (store_fixture.h),
 * through store.h alone. These are the basics every backend gives alike: puts, the values a
 * card comes back with, the count and page of a search, a condition of each kind, bulk
 * loads, the data version. test_pg_cards.c holds PostgreSQL's answers to thousands more
 * searches against SQLite's. */
#include "store_fixture.h"

/* Card n (id c0000000-0000-4000-8000-0000000000nn) with the digits of number, created at
 * noon on day of January 2024. Its keyed hash stands in as the digits, zero-padded. */
static bd_card_in card(int n, int day, const char *number)
{
    bd_card_in c;
    memset(&c, 0, sizeof c);
    snprintf(c.id, sizeof c.id, "c0000000-0000-4000-8000-%012d", n);
    snprintf(c.created_at, sizeof c.created_at, "2024-01-%02d 12:00:00", day);
    size_t len = strlen(number);
    snprintf(c.number_masked, sizeof c.number_masked, "%.6s%.*s%s", number, (int)len - 10,
             "*********", number + len - 4);
    memcpy(c.bin, number, 6);
    memcpy(c.last4, number + len - 4, 4);
    c.length = (int)len;
    memcpy(c.number_hmac, number, len);
    c.leak_size = -1;
    return c;
}

/* Puts c; returns whether it went in (false: a card with its id exists). */
static bool put_card(bd_store *s, const bd_card_in *c)
{
    bool ins = false;
    CHECK_INT(bd_store_card_put(s, c, &ins), BD_OK);
    return ins;
}

/* The cards most tests search, by number, created day, owner, bank, CVV and expiry:
 *   1  4111111111111111     day 1  John Smith  First Bank      123  2026-05-31
 *   2  4111110000001111     day 2  Jane Smith  Second Bank     456  2027-01-31
 *   3  4111120000002222     day 2  John Doe    First Bank      123  2025-12-31
 *   4  5500000000000000004  day 3  Zoë Müller  Bank of Zürich  789  2028-02-29
 *   5  411111000001111      day 4  (card 5 has no owner, bank, CVV or expiry) */
static const struct {
    const char *number, *owner, *bank, *cvv, *expire;
    int day;
} CARDS[] = {
    {"4111111111111111", "John Smith", "First Bank", "123", "2026-05-31", 1},
    {"4111110000001111", "Jane Smith", "Second Bank", "456", "2027-01-31", 2},
    {"4111120000002222", "John Doe", "First Bank", "123", "2025-12-31", 2},
    {"5500000000000000004", "Zo\xc3\xab M\xc3\xbcller", "Bank of Z\xc3\xbcrich", "789",
     "2028-02-29", 3},
    {"411111000001111", NULL, NULL, NULL, "", 4},
};

/* A CVV as the importer hands it over: its mask, and its keyed hash, for which its digits
 * stand in, zero-padded. */
static void set_cvv(bd_card_in *c, const char *cvv)
{
    memset(c->cvv_masked, 0, sizeof c->cvv_masked);
    memset(c->cvv_hmac, 0, sizeof c->cvv_hmac);
    if (!cvv)
        return;
    memset(c->cvv_masked, '*', strlen(cvv));
    memcpy(c->cvv_hmac, cvv, strlen(cvv));
}

static bd_card_in card_of(int n)
{
    bd_card_in c = card(n, CARDS[n - 1].day, CARDS[n - 1].number);
    c.owner = bd_slice_from(CARDS[n - 1].owner);
    c.bank = bd_slice_from(CARDS[n - 1].bank);
    set_cvv(&c, CARDS[n - 1].cvv);
    snprintf(c.expire_date, sizeof c.expire_date, "%s", CARDS[n - 1].expire);
    return c;
}

static void five_cards(bd_store *s)
{
    for (int n = 1; n <= 5; n++) {
        bd_card_in c = card_of(n);
        CHECK(put_card(s, &c));
    }
}

/* The numbers n of the cards of the page ("3,2"), then the count: "3,2 /5". */
static char shown[512];

static int take_card(void *ctx, const bd_card_row *row)
{
    (void)ctx;
    size_t n = strlen(shown);
    const char *end = row->id.ptr + row->id.len;
    int num = row->id.len >= 2 ? (end[-2] - '0') * 10 + (end[-1] - '0') : -1;
    snprintf(shown + n, sizeof shown - n, "%s%d", n ? "," : "", num);
    return 0;
}

static const char *search(bd_store *s, const bd_card_query *q)
{
    static char out[600];
    shown[0] = '\0';
    int64_t found = -1;
    CHECK_INT(bd_store_card_search(s, q, &found, take_card, NULL), BD_OK);
    snprintf(out, sizeof out, "%s /%lld", shown, (long long)found);
    return out;
}

/* The cards matching where, newest first, on one page. */
static const char *matching(bd_store *s, const bd_card_cond *where)
{
    bd_card_query q = {
        .where = where, .sort = {{BD_CARD_CREATED_AT, true}}, .nsort = 1, .limit = 100};
    return search(s, &q);
}

/* ---- conditions ------------------------------------------------------------------ */

static const bd_card_cond ALL = {.kind = BD_CC_ALL};
static const bd_card_cond BIN = {.kind = BD_CC_NUMBER, .bin = "411111"};
static const bd_card_cond BIN_16 = {.kind = BD_CC_NUMBER, .bin = "411111", .length = 16};
static const bd_card_cond BIN_PATTERN = {.kind = BD_CC_NUMBER, .bin = "4111??"};
static const bd_card_cond ENDS_1111 = {.kind = BD_CC_NUMBER, .last4 = "1111"};
static const bd_card_cond ENDS_04 = {.kind = BD_CC_NUMBER, .last4 = "04"};
static const bd_card_cond LONG = {.kind = BD_CC_NUMBER, .min_length = 19};
static const bd_card_cond CARD_3 = {.kind = BD_CC_HMAC, .hmac = "4111120000002222"};
static const bd_card_cond CVV_123 = {.kind = BD_CC_CVV, .hmac = "123"};
static const bd_card_cond CVV_789 = {.kind = BD_CC_CVV, .hmac = "789"};
static const bd_slice SMITH[] = {BD_SLICE_LIT("smith")},
                      JOHN_SMITH[] = {BD_SLICE_LIT("john"), BD_SLICE_LIT("smith")},
                      JO[] = {BD_SLICE_LIT("jo")}, DOE[] = {BD_SLICE_LIT("doe")},
                      ZURICH[] = {BD_SLICE_LIT("zurich")};
static const bd_card_cond OWNER_SMITH = {
    .kind = BD_CC_WORDS, .column = BD_CARD_OWNER, .words = SMITH, .nwords = 1};
static const bd_card_cond OWNER_JOHN_SMITH = {
    .kind = BD_CC_WORDS, .column = BD_CARD_OWNER, .words = JOHN_SMITH, .nwords = 2};
static const bd_card_cond OWNER_JO_ = {
    .kind = BD_CC_WORDS, .column = BD_CARD_OWNER, .words = JO, .nwords = 1, .prefix = true};
static const bd_card_cond OWNER_DOE = {
    .kind = BD_CC_WORDS, .column = BD_CARD_OWNER, .words = DOE, .nwords = 1};
static const bd_card_cond BANK_ZURICH = {
    .kind = BD_CC_WORDS, .column = BD_CARD_BANK, .words = ZURICH, .nwords = 1};
static const bd_card_cond EXPIRES_2026_2027 = {.kind = BD_CC_RANGE,
                                               .column = BD_CARD_EXPIRE_DATE,
                                               .low = BD_SLICE_LIT("2026-01-01"),
                                               .high = BD_SLICE_LIT("2027-12-31"),
                                               .low_inclusive = true,
                                               .high_inclusive = true};
static const bd_card_cond EXPIRES = {.kind = BD_CC_RANGE, .column = BD_CARD_EXPIRE_DATE};
static const bd_card_cond *const CVV_123_KID[] = {&CVV_123};
static const bd_card_cond NOT_CVV_123 = {.kind = BD_CC_NOT, .kids = CVV_123_KID, .nkids = 1};
static const bd_card_cond *const SMITH_KID[] = {&OWNER_SMITH};
static const bd_card_cond NOT_SMITH = {.kind = BD_CC_NOT, .kids = SMITH_KID, .nkids = 1};
static const bd_card_cond *const BIN_NOT_SMITH_KIDS[] = {&BIN, &NOT_SMITH};
static const bd_card_cond BIN_NOT_SMITH = {
    .kind = BD_CC_AND, .kids = BIN_NOT_SMITH_KIDS, .nkids = 2};
static const bd_card_cond *const CVV_789_OR_DOE_KIDS[] = {&CVV_789, &OWNER_DOE};
static const bd_card_cond CVV_789_OR_DOE = {
    .kind = BD_CC_OR, .kids = CVV_789_OR_DOE_KIDS, .nkids = 2};

/* A condition of each kind and the cards of five_cards() it matches, newest first. */
static const struct {
    const char *name;
    const bd_card_cond *where;
    const char *want;
} CONDITIONS[] = {
    {"every card", &ALL, "5,4,3,2,1 /5"},
    {"BIN 411111", &BIN, "5,2,1 /3"},
    {"BIN 411111, 16 digits", &BIN_16, "2,1 /2"},
    {"BIN 4111??", &BIN_PATTERN, "5,3,2,1 /4"},
    {"ends with 1111", &ENDS_1111, "5,2,1 /3"},
    {"ends with 04", &ENDS_04, "4 /1"},
    {"19 digits or more", &LONG, "4 /1"},
    {"the hash of card 3", &CARD_3, "3 /1"},
    {"CVV 123", &CVV_123, "3,1 /2"},
    {"owner word smith", &OWNER_SMITH, "2,1 /2"},
    {"owner phrase john smith", &OWNER_JOHN_SMITH, "1 /1"},
    {"owner word prefix jo", &OWNER_JO_, "3,1 /2"},
    {"bank word zurich (for Zürich)", &BANK_ZURICH, "4 /1"},
    {"expiry in 2026 or 2027", &EXPIRES_2026_2027, "2,1 /2"},
    {"has an expiry", &EXPIRES, "4,3,2,1 /4"},
    {"not CVV 123 (no CVV included)", &NOT_CVV_123, "5,4,2 /3"},
    {"BIN 411111 and not owner smith", &BIN_NOT_SMITH, "5 /1"},
    {"CVV 789 or owner doe", &CVV_789_OR_DOE, "4,3 /2"},
};

#define NCONDITIONS (sizeof CONDITIONS / sizeof CONDITIONS[0])

/* ---- puts and values ------------------------------------------------------------- */

static int take_values(void *ctx, const bd_card_row *row)
{
    (void)ctx;
    const bd_slice *f[] = {&row->id,
                           &row->created_at,
                           &row->bank,
                           &row->number_masked,
                           &row->owner,
                           &row->cvv,
                           &row->expire_date,
                           &row->leak_id,
                           &row->leak_name,
                           &row->leak_publish_date,
                           &row->leak_discover_date,
                           &row->leak_tags};
    size_t n = strlen(shown);
    snprintf(shown + n, sizeof shown - n, "%s", n ? "\n" : "");
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        bd_slice v = f[i]->ptr ? *f[i] : BD_SLICE_LIT("~");
        n = strlen(shown);
        snprintf(shown + n, sizeof shown - n, "%.*s|", (int)v.len, v.ptr);
    }
    n = strlen(shown);
    if (row->has_cvss)
        snprintf(shown + n, sizeof shown - n, "%.2f|", row->cvss);
    else
        snprintf(shown + n, sizeof shown - n, "~|");
    n = strlen(shown);
    if (row->has_leak_size)
        snprintf(shown + n, sizeof shown - n, "%lld", (long long)row->leak_size);
    else
        snprintf(shown + n, sizeof shown - n, "~");
    return 0;
}

/* Every field of the cards matching where, card id descending. */
static const char *values(bd_store *s, const bd_card_cond *where)
{
    bd_card_query q = {.where = where, .limit = 10};
    int64_t found = -1;
    shown[0] = '\0';
    CHECK_INT(bd_store_card_search(s, &q, &found, take_values, NULL), BD_OK);
    return shown;
}

TEST(test_card_put_keeps_the_first_card_of_an_id)
{
    bd_store *s = fresh();
    bd_card_in c = card_of(1);
    CHECK(put_card(s, &c));
    c.owner = BD_SLICE_LIT("Someone Else");
    CHECK(!put_card(s, &c));
    CHECK_STR(matching(s, &ALL), "1 /1");
    CHECK_STR(matching(s, &OWNER_SMITH), "1 /1");
}

TEST(test_card_values_come_back_as_put)
{
    bd_store *s = fresh();
    bd_card_in full = card_of(4);
    full.has_cvss = true;
    full.cvss = 7.5;
    full.leak_id = BD_SLICE_LIT("L-42");
    full.leak_name = BD_SLICE_LIT("Leak \"42\"");
    snprintf(full.leak_publish_date, sizeof full.leak_publish_date, "2024-02-01");
    snprintf(full.leak_discover_date, sizeof full.leak_discover_date, "2024-01-15");
    full.leak_size = 1200;
    full.leak_tags = (bd_slice){"", 0}; /* empty, not NULL */
    CHECK(put_card(s, &full));
    bd_card_in bare = card_of(5);
    CHECK(put_card(s, &bare));
    CHECK_STR(values(s, &ALL),
              "c0000000-0000-4000-8000-000000000005|2024-01-04 12:00:00|~|411111*****1111|~|~|~|"
              "~|~|~|~|~|~|~\n"
              "c0000000-0000-4000-8000-000000000004|2024-01-03 12:00:00|Bank of Z\xc3\xbcrich|"
              "550000*********0004|Zo\xc3\xab M\xc3\xbcller|***|2028-02-29|L-42|Leak \"42\"|"
              "2024-02-01|2024-01-15||7.50|1200");
}

/* A CVV is kept as its mask, one '*' per digit, and found by its keyed hash alone: put
 * alone, in a transaction (PostgreSQL streams those) and in a bulk load. */
TEST(test_card_cvv_is_kept_masked_and_found_by_its_keyed_hash)
{
    bd_store *s = fresh();
    bd_card_in c = card(6, 5, "4111111111116666");
    set_cvv(&c, "1234");
    CHECK(put_card(s, &c));
    CHECK_INT(bd_store_begin(s), BD_OK);
    c = card(7, 6, "4111111111117777");
    set_cvv(&c, "1234");
    CHECK(put_card(s, &c));
    CHECK_INT(bd_store_commit(s), BD_OK);
    CHECK_INT(bd_store_begin(s), BD_OK);
    CHECK_INT(bd_store_bulk_begin(s, BD_BULK_CARDS), BD_OK);
    c = card(8, 7, "4111111111118888");
    set_cvv(&c, "321");
    CHECK(put_card(s, &c));
    CHECK_INT(bd_store_bulk_end(s, BD_BULK_CARDS), BD_OK);
    CHECK_INT(bd_store_commit(s), BD_OK);
    static const bd_card_cond CVV_1234 = {.kind = BD_CC_CVV, .hmac = "1234"},
                              CVV_321 = {.kind = BD_CC_CVV, .hmac = "321"};
    CHECK_STR(matching(s, &CVV_1234), "7,6 /2");
    CHECK_STR(matching(s, &CVV_321), "8 /1");
    CHECK_STR(matching(s, &CVV_123), " /0");
    const char *got = values(s, &ALL);
    CHECK(strstr(got, "000000000008|2024-01-07 12:00:00|~|411111******8888|~|***|") != NULL);
    CHECK(strstr(got, "000000000007|2024-01-06 12:00:00|~|411111******7777|~|****|") != NULL);
    CHECK(strstr(got, "000000000006|2024-01-05 12:00:00|~|411111******6666|~|****|") != NULL);
}

/* ---- searches -------------------------------------------------------------------- */

TEST(test_card_search_counts_every_match_and_pages_in_sort_order)
{
    bd_store *s = fresh();
    five_cards(s);
    bd_card_query q = {.where = &ALL, .sort = {{BD_CARD_CREATED_AT, true}}, .nsort = 1, .limit = 2};
    const char *newest_first[] = {"5,4 /5", "3,2 /5", "1 /5"}; /* 3 and 2: one day, id desc */
    for (int i = 0; i < 3; i++) {
        q.offset = 2 * i;
        CHECK_STR(search(s, &q), newest_first[i]);
    }
    q.sort[0].descending = false;
    q.offset = 0;
    q.limit = 5;
    CHECK_STR(search(s, &q), "1,2,3,4,5 /5");
    q.sort[0] = (bd_card_sort){BD_CARD_BANK, false}; /* no bank first, then ties by id */
    q.sort[1] = (bd_card_sort){BD_CARD_CREATED_AT, true};
    q.nsort = 2;
    CHECK_STR(search(s, &q), "5,4,3,1,2 /5");
    q.nsort = 0; /* card id, descending */
    CHECK_STR(search(s, &q), "5,4,3,2,1 /5");
}

TEST(test_card_search_past_the_last_card_keeps_the_count)
{
    bd_store *s = fresh();
    five_cards(s);
    bd_card_query q = {.where = &BIN, .sort = {{BD_CARD_CREATED_AT, true}}, .nsort = 1, .limit = 2};
    const int64_t offsets[] = {3, 4, 1000};
    for (int i = 0; i < 3; i++) {
        q.offset = offsets[i];
        CHECK_STR(search(s, &q), " /3");
    }
    q.offset = 0;
    q.limit = 0;
    CHECK_STR(search(s, &q), " /3");
    static const bd_slice NOBODY[] = {BD_SLICE_LIT("nobody")};
    bd_card_cond none = {
        .kind = BD_CC_WORDS, .column = BD_CARD_OWNER, .words = NOBODY, .nwords = 1};
    q.where = &none;
    q.limit = 2;
    CHECK_STR(search(s, &q), " /0");
}

TEST(test_card_search_answers_a_condition_of_each_kind)
{
    bd_store *s = fresh();
    five_cards(s);
    for (size_t i = 0; i < NCONDITIONS; i++) {
        const char *got = matching(s, CONDITIONS[i].where);
        if (strcmp(got, CONDITIONS[i].want) != 0)
            TEST_FAIL("%s: \"%s\", want \"%s\"", CONDITIONS[i].name, got, CONDITIONS[i].want);
    }
}

/* ---- transactions and bulk loads ------------------------------------------------- */

TEST(test_card_puts_rolled_back_leave_nothing)
{
    bd_store *s = fresh();
    bd_card_in c = card_of(1);
    CHECK(put_card(s, &c));
    CHECK_INT(bd_store_begin(s), BD_OK);
    for (int n = 2; n <= 5; n++) {
        c = card_of(n);
        CHECK(put_card(s, &c));
    }
    bd_store_rollback(s);
    CHECK_STR(matching(s, &ALL), "1 /1");
    CHECK_STR(matching(s, &BIN), "1 /1");
    CHECK_STR(matching(s, &ENDS_1111), "1 /1");
    CHECK_STR(matching(s, &OWNER_SMITH), "1 /1");
}

/* Puts card 1, then the cards of five_cards() in one transaction, each twice, with
 * bulk_begin and bulk_end around the puts or without. Returns the duplicates reported, at
 * the put (SQLite) or at the commit (PostgreSQL), each once: 6. */
static int load_cards(bd_store *s, bool bulk)
{
    bd_card_in first = card_of(1);
    CHECK(put_card(s, &first));
    int dups = 0;
    CHECK_INT(bd_store_begin(s), BD_OK);
    if (bulk)
        CHECK_INT(bd_store_bulk_begin(s, BD_BULK_CARDS), BD_OK);
    for (int n = 1; n <= 5; n++) {
        bd_card_in c = card_of(n);
        for (int i = 0; i < 2; i++)
            dups += !put_card(s, &c);
    }
    if (bulk)
        CHECK_INT(bd_store_bulk_end(s, BD_BULK_CARDS), BD_OK);
    CHECK_INT(bd_store_commit(s), BD_OK);
    dups += (int)bd_store_take_late_duplicates(s);
    CHECK_INT(bd_store_take_late_duplicates(s), 0);
    return dups;
}

TEST(test_bulk_card_load_gives_the_content_of_a_plain_load)
{
    bd_store *plain = fresh();
    bd_store *bulk = fresh();
    CHECK_INT(load_cards(plain, false), 6);
    CHECK_INT(load_cards(bulk, true), 6);
    for (size_t i = 0; i < NCONDITIONS; i++) {
        const char *want = CONDITIONS[i].want, *got = matching(plain, CONDITIONS[i].where);
        if (strcmp(got, want) != 0)
            TEST_FAIL("plain load, %s: \"%s\", want \"%s\"", CONDITIONS[i].name, got, want);
        got = matching(bulk, CONDITIONS[i].where);
        if (strcmp(got, want) != 0)
            TEST_FAIL("bulk load, %s: \"%s\", want \"%s\"", CONDITIONS[i].name, got, want);
    }
    char want[1024];
    snprintf(want, sizeof want, "%s", values(plain, &ALL));
    CHECK_STR(values(bulk, &ALL), want);
    /* after the load, cards go in as before: a bulk load's own ids do not meet later ones */
    static const char *const later_numbers[] = {"555555000006666", "555555000007777",
                                                 "555555000008888", "555555000009999"};
    for (int i = 0; i < 4; i++) {
        bd_card_in later = card(6 + i, 9, later_numbers[i]);
        CHECK(put_card(plain, &later));
        CHECK(put_card(bulk, &later));
        CHECK(!put_card(bulk, &later));
    }
    snprintf(want, sizeof want, "%s", values(plain, &ALL));
    CHECK_STR(values(bulk, &ALL), want);
}

/* ---- statistics and the data version --------------------------------------------- */

static int no_breach(void *ctx, const bd_stats_row *row)
{
    (void)row;
    ++*(int *)ctx;
    return 0;
}

TEST(test_stats_count_every_card)
{
    bd_store *s = fresh();
    five_cards(s);
    int64_t records = -1, cards = -1;
    int breaches = 0;
    CHECK_INT(bd_store_stats(s, no_breach, &breaches, &records, &cards), BD_OK);
    CHECK_INT(breaches, 0);
    CHECK_INT(records, 0);
    CHECK_INT(cards, 5);
}

TEST(test_card_search_inside_a_read_reports_the_data_version)
{
    bd_store *w = fresh();
    five_cards(w);
    bd_store *r = open_uri(fresh_uri(), BD_STORE_READ);
    CHECK_INT(bd_store_read_begin(r), BD_OK);
    CHECK_STR(matching(r, &CVV_123), "3,1 /2");
    uint64_t v = bd_store_data_version(r);
    bd_store_read_end(r);
    CHECK_INT(bd_store_read_begin(r), BD_OK);
    CHECK_STR(matching(r, &CVV_123), "3,1 /2");
    CHECK(bd_store_data_version(r) == v);
    bd_store_read_end(r);
    bd_card_in c = card(6, 5, "4111111111116666");
    set_cvv(&c, "123");
    CHECK(put_card(w, &c));
    CHECK_INT(bd_store_read_begin(r), BD_OK);
    CHECK_STR(matching(r, &CVV_123), "6,3,1 /3");
    CHECK(bd_store_data_version(r) != v);
    bd_store_read_end(r);
}

static void suite(void)
{
    RUN_CONTRACT(test_card_put_keeps_the_first_card_of_an_id);
    RUN_CONTRACT(test_card_values_come_back_as_put);
    RUN_CONTRACT(test_card_cvv_is_kept_masked_and_found_by_its_keyed_hash);
    RUN_CONTRACT(test_card_search_counts_every_match_and_pages_in_sort_order);
    RUN_CONTRACT(test_card_search_past_the_last_card_keeps_the_count);
    RUN_CONTRACT(test_card_search_answers_a_condition_of_each_kind);
    RUN_CONTRACT(test_card_puts_rolled_back_leave_nothing);
    RUN_CONTRACT(test_bulk_card_load_gives_the_content_of_a_plain_load);
    RUN_CONTRACT(test_stats_count_every_card);
    RUN_CONTRACT(test_card_search_inside_a_read_reports_the_data_version);
}

int main(void)
{
    return fx_main(suite);
}
