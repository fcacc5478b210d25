/* Card search on PostgreSQL against a live server (BREACHD_TEST_PG_URI; skipped when
 * unset), held to the SQLite store's answers: every search runs on both stores, loaded with
 * the same cards, and must give the same count and the same rows in the same order, byte
 * for byte. The searches are those of tests/e2e/test_cards.py (with the ids they expect),
 * then a few thousand random ones over random cards.
 *
 * Each data set lives in a PostgreSQL schema of its own (made and dropped here, reached
 * through the URI's search_path option) and a SQLite file in a temporary directory. */
#include <libpq-fe.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "auth/secret.h"
#include "ingest/cvv.h"
#include "ingest/mask.h"
#include "query/plan.h"
#include "store/pg/cards_sql.h"
#include "store/store_impl.h"
#include "test.h"

static const char *base_uri;
static PGconn *admin;
static char tmpdir[64];
static uint8_t secret[BD_SECRET_LEN];

typedef struct {
    char schema[64];
    bd_store *pg, *lite;
} dataset;

static void admin_sql(const char *sql)
{
    PGresult *res = PQexec(admin, sql);
    if (PQresultStatus(res) != PGRES_COMMAND_OK && PQresultStatus(res) != PGRES_TUPLES_OK)
        TEST_FAIL("%s: %s", sql, PQresultErrorMessage(res));
    PQclear(res);
}

/* routed: the PostgreSQL store routes its searches as on a Citus coordinator. */
static bool open_dataset_as(dataset *d, const char *name, bool routed)
{
    char sql[256], u[1024], why[512], path[128];
    snprintf(d->schema, sizeof d->schema, "bdcards_%ld_%s", (long)getpid(), name);
    snprintf(sql, sizeof sql, "CREATE SCHEMA %s", d->schema);
    admin_sql(sql);
    snprintf(u, sizeof u, "%s%coptions=-csearch_path%%3D%s%s", base_uri,
             strchr(base_uri, '?') ? '&' : '?', d->schema,
             routed ? "%20-cbreachd.routed_searches%3Don" : "");
    d->pg = d->lite = NULL;
    bd_result r = bd_pg_open(u, BD_STORE_WRITE | BD_STORE_CREATE, &d->pg, why, sizeof why);
    if (r != BD_OK)
        TEST_FAIL("open %s: %s", u, why);
    snprintf(path, sizeof path, "%s/%s.db", tmpdir, name);
    r = bd_store_open(path, BD_STORE_WRITE | BD_STORE_CREATE, &d->lite, why, sizeof why);
    if (r != BD_OK)
        TEST_FAIL("open %s: %s", path, why);
    return d->pg && d->lite;
}

static bool open_dataset(dataset *d, const char *name)
{
    return open_dataset_as(d, name, false);
}

static void close_dataset(dataset *d)
{
    char sql[256];
    if (d->pg)
        d->pg->ops->close(d->pg);
    if (d->lite)
        bd_store_close(d->lite);
    snprintf(sql, sizeof sql, "DROP SCHEMA %s CASCADE", d->schema);
    admin_sql(sql);
}

/* ---- cards -------------------------------------------------------------------------- */

/* A card as a CSV row gives it after import: NULL for an absent value, dates normalised. */
typedef struct {
    const char *id, *created, *bank, *number, *owner, *cvv, *expire, *cvss, *leak_id, *leak_name,
        *publish, *discover, *size, *tags;
} card_src;

static void make_card(const card_src *s, bd_card_in *c)
{
    memset(c, 0, sizeof *c);
    snprintf(c->id, sizeof c->id, "%s", s->id);
    snprintf(c->created_at, sizeof c->created_at, "%s", s->created);
    char digits[20];
    size_t n = 0;
    if (!bd_card_digits(bd_slice_from(s->number), digits, &n))
        TEST_FAIL("bad number %s", s->number);
    bd_mask_card(digits, n, c->number_masked);
    memcpy(c->bin, digits, 6);
    memcpy(c->last4, digits + n - 4, 4);
    c->length = (int)n;
    uint8_t sha[32];
    crypto_hash_sha256(sha, (const uint8_t *)digits, n);
    bd_card_key(secret, sha, c->number_hmac);
    c->bank = bd_slice_from(s->bank);
    c->owner = bd_slice_from(s->owner);
    if (s->cvv)
        bd_cvv_protect(secret, bd_slice_from(s->cvv), c->cvv_masked, c->cvv_hmac);
    c->leak_id = bd_slice_from(s->leak_id);
    c->leak_name = bd_slice_from(s->leak_name);
    c->leak_tags = bd_slice_from(s->tags);
    snprintf(c->expire_date, sizeof c->expire_date, "%s", s->expire ? s->expire : "");
    snprintf(c->leak_publish_date, sizeof c->leak_publish_date, "%s", s->publish ? s->publish : "");
    snprintf(c->leak_discover_date, sizeof c->leak_discover_date, "%s",
             s->discover ? s->discover : "");
    c->has_cvss = s->cvss != NULL;
    c->cvss = s->cvss ? strtod(s->cvss, NULL) : 0;
    c->leak_size = s->size ? strtoll(s->size, NULL, 10) : -1;
}

static void load(dataset *d, const card_src *cards, size_t n)
{
    CHECK_INT(bd_store_begin(d->lite), BD_OK);
    CHECK_INT(d->pg->ops->begin(d->pg), BD_OK);
    for (size_t i = 0; i < n; i++) {
        bd_card_in c;
        make_card(&cards[i], &c);
        bool a = false, b = false;
        CHECK_INT(bd_store_card_put(d->lite, &c, &a), BD_OK);
        CHECK_INT(d->pg->ops->card_put(d->pg, &c, &b), BD_OK);
        if (a != b)
            TEST_FAIL("card %s inserted: sqlite %d, postgresql %d", c.id, a, b);
    }
    CHECK_INT(bd_store_commit(d->lite), BD_OK);
    CHECK_INT(d->pg->ops->commit(d->pg), BD_OK);
}

/* ---- searching both stores ---------------------------------------------------------- */

static const struct {
    const char *name;
    bd_card_column column;
} SORTABLE[] = {
    {"createdAt", BD_CARD_CREATED_AT},
    {"expireDate", BD_CARD_EXPIRE_DATE},
    {"bank", BD_CARD_BANK},
    {"owner", BD_CARD_OWNER},
    {"cvssScore", BD_CARD_CVSS},
    {"leakName", BD_CARD_LEAK_NAME},
    {"leakPublishDate", BD_CARD_LEAK_PUBLISH_DATE},
    {"leakDiscoverDate", BD_CARD_LEAK_DISCOVER_DATE},
    {"leakSize", BD_CARD_LEAK_SIZE},
};
#define NSORTABLE (sizeof SORTABLE / sizeof SORTABLE[0])

/* "field[,desc]" separated by spaces into q's sort keys; none: createdAt descending. */
static void parse_sort(const char *spec, bd_card_query *q)
{
    q->nsort = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", spec ? spec : "");
    for (char *save = NULL, *f = strtok_r(buf, " ", &save); f; f = strtok_r(NULL, " ", &save)) {
        char *comma = strchr(f, ',');
        bool desc = comma && strcmp(comma + 1, "desc") == 0;
        if (comma)
            *comma = '\0';
        size_t k = 0;
        while (k < NSORTABLE && strcmp(f, SORTABLE[k].name) != 0)
            k++;
        if (k == NSORTABLE)
            TEST_FAIL("unknown sort %s", f);
        else
            q->sort[q->nsort++] = (bd_card_sort){SORTABLE[k].column, desc};
    }
    if (q->nsort == 0)
        q->sort[q->nsort++] = (bd_card_sort){BD_CARD_CREATED_AT, true};
}

typedef struct {
    char text[16384];
    size_t len;
    char ids[4096];
    size_t idlen;
} page_out;

static void put_slice(page_out *o, bd_slice v)
{
    if (v.ptr)
        o->len +=
            (size_t)snprintf(o->text + o->len, sizeof o->text - o->len, "%.*s|", (int)v.len, v.ptr);
    else
        o->len += (size_t)snprintf(o->text + o->len, sizeof o->text - o->len, "NULL|");
    if (o->len >= sizeof o->text)
        o->len = sizeof o->text - 1;
}

static int take_row(void *ctx, const bd_card_row *row)
{
    page_out *o = ctx;
    const bd_slice *v[] = {&row->id,
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
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        put_slice(o, *v[i]);
    char num[64];
    snprintf(num, sizeof num, row->has_cvss ? "%.17g|" : "NULL|", row->cvss);
    put_slice(o, bd_slice_from(num));
    snprintf(num, sizeof num, row->has_leak_size ? "%lld\n" : "NULL\n", (long long)row->leak_size);
    put_slice(o, bd_slice_from(num));
    o->idlen += (size_t)snprintf(o->ids + o->idlen, sizeof o->ids - o->idlen, "%s%.*s",
                                 o->idlen ? "," : "", (int)row->id.len, row->id.ptr);
    if (o->idlen >= sizeof o->ids)
        o->idlen = sizeof o->ids - 1;
    return 0;
}

/* One search as the HTTP handler runs it (a read view, the count, then the page with the
 * count as the hint), on one store. false when the query does not parse. */
static bool search(bd_store *s, bool pg, const char *query, const char *sort, int page, int size,
                   int64_t *count, page_out *o)
{
    bd_card_plan plan;
    bd_query_error err;
    if (bd_card_plan_build(bd_slice_from(query), secret, &plan, &err) != BD_OK)
        return false;
    bd_card_query q;
    memset(&q, 0, sizeof q);
    q.where = bd_card_plan_root(&plan);
    parse_sort(sort, &q);
    q.offset = (int64_t)page * size;
    q.limit = size;
    memset(o, 0, sizeof *o);
    *count = -1;
    bd_result r = bd_store_read_begin(s);
    if (r == BD_OK)
        r = bd_store_card_search(s, &q, count, take_row, o);
    bd_store_read_end(s);
    if (r != BD_OK)
        TEST_FAIL("%s: %s (sort %s, page %d) failed: %d", pg ? "postgresql" : "sqlite", query,
                  sort ? sort : "-", page, (int)r);
    bd_card_plan_free(&plan);
    return true;
}

static int compared, differences, nonempty;

/* Runs query on both stores; the PostgreSQL page's ids are left in ids. */
static void both(dataset *d, const char *query, const char *sort, int page, int size, char *ids,
                 size_t idcap, int64_t *count)
{
    static page_out a, b;
    int64_t na, nb;
    bool ok_a = search(d->lite, false, query, sort, page, size, &na, &a);
    bool ok_b = search(d->pg, true, query, sort, page, size, &nb, &b);
    if (!ok_a || !ok_b) {
        if (ok_a != ok_b)
            TEST_FAIL("%s parses on one store only", query);
        snprintf(ids, idcap, "(invalid)");
        return;
    }
    compared++;
    nonempty += na > 0;
    if (na != nb || strcmp(a.text, b.text) != 0) {
        differences++;
        TEST_FAIL("%s (sort %s, page %d, size %d): sqlite %lld [%s], postgresql %lld [%s]", query,
                  sort ? sort : "-", page, size, (long long)na, a.ids, (long long)nb, b.ids);
    }
    snprintf(ids, idcap, "%s", b.ids);
    *count = nb;
}

/* The ids of a search's first 100 rows, in order, which must be want. */
static void expect(dataset *d, const char *query, const char *sort, const char *want)
{
    char ids[4096];
    int64_t n;
    both(d, query, sort, 0, 100, ids, sizeof ids, &n);
    if (strcmp(ids, want) != 0)
        TEST_FAIL("%s (sort %s): %s, want %s", query, sort ? sort : "-", ids, want);
}

static int by_text(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* want, a comma-separated list, sorted. */
static void sorted_ids(const char *ids, char *out, size_t cap)
{
    char buf[4096], *parts[512];
    size_t n = 0, len = 0;
    snprintf(buf, sizeof buf, "%s", ids);
    for (char *save = NULL, *p = strtok_r(buf, ",", &save); p && n < 512;
         p = strtok_r(NULL, ",", &save))
        parts[n++] = p;
    qsort(parts, n, sizeof parts[0], by_text);
    out[0] = '\0';
    for (size_t i = 0; i < n; i++)
        len += (size_t)snprintf(out + len, cap - len, i ? ",%s" : "%s", parts[i]);
}

/* The set of ids a search finds (test_cards.py's same()), and the count with it. */
static void same(dataset *d, const char *query, const char *want)
{
    char ids[4096], got[4096], wanted[4096];
    int64_t n = 0;
    both(d, query, NULL, 0, 100, ids, sizeof ids, &n);
    sorted_ids(ids, got, sizeof got);
    sorted_ids(want, wanted, sizeof wanted);
    if (strcmp(got, wanted) != 0)
        TEST_FAIL("%s: %s, want %s", query, got, wanted);
    int64_t want_n = want[0] ? 1 : 0;
    for (const char *p = want; *p; p++)
        want_n += *p == ',';
    if (n != want_n)
        TEST_FAIL("%s: count %lld, want %lld", query, (long long)n, (long long)want_n);
}

/* ---- tests/e2e/fixtures/cards.csv and test_cards.py ---------------------------------- */

static const card_src FIXTURE[] = {
    {"c01", "2024-01-01 10:00:00", "Example Bank", "4111 1111 1111 1111", "John Smith", "123",
     "2026-01-31", "7.5", "L1", "Leak One", "2024-01-02", "2024-01-03", "10", "paid,fresh"},
    {"c02", "2024-02-01 09:30:00", "Example Bank", "4111-1122-2222-1111", "Johnny Appleseed", "456",
     "2025-06-30", "5", "L1", "Leak One", "2024-01-02", "2024-01-03", "10", "paid"},
    {"c03", "2023-05-05 05:05:05", "Test Credit Union", "4111110000000001111", "Mary Jane Smith",
     "789", "2027-12-31", "9.1", "L2", "Leak Two", "2023-06-01", "2023-06-02", "20", "free"},
    {"c04", "2022-03-03 03:03:03", "Test National Bank", "378282246310005", "Amex Holder", "1234",
     "2024-12-31", "2.5", "L2", "Leak Two", "2023-06-01", "2023-06-02", "20", "free"},
    {"c05", "2024-01-01 00:00:00", "Test National Bank", "378282000001111", "John Doe", "123",
     "2026-01-31", "6", "L3", "Leak Three", "2024-05-05", "2024-05-06", "30", "paid"},
    {"c06", "2021-07-07 07:07:07", "Demo Bank", "5555555555554444", "Jane Smith", "321",
     "2023-01-31", "4", "L3", "Leak Three", "2024-05-05", "2024-05-06", "30", "paid"},
    {"c07", "2020-01-01 12:00:00", "Demo Bank", "5555550000004444",
     "Jos\xc3\xa9 N\xc3\xba\xc3\xb1\x65z", "999", "2030-01-31", "8", "L1", "Leak One", "2024-01-02",
     "2024-01-03", "10", "paid"},
    {"c08", "2024-03-15 15:15:15", "Example Bank", "6011111111111117", "Smithers Waylon", "111",
     "2026-06-30", "3.3", "L2", "Leak Two", "2023-06-01", "2023-06-02", "20", "free"},
};

#define BY_CREATED_DESC "c08,c02,c01,c05,c03,c04,c06,c07"

static dataset fx;

TEST(test_fixture_loads_the_same_and_twice_adds_nothing)
{
    load(&fx, FIXTURE, sizeof FIXTURE / sizeof FIXTURE[0]);
    bd_card_in c;
    make_card(&FIXTURE[0], &c);
    bool ins = true;
    CHECK_INT(fx.pg->ops->card_put(fx.pg, &c, &ins), BD_OK);
    CHECK(!ins);
    char sql[512];
    snprintf(sql, sizeof sql,
             "SELECT (SELECT count(*) FROM %s.card_words), "
             "(SELECT count(*) FROM %s.card_owner_words), "
             "(SELECT sum(n) FROM %s.card_counts WHERE kind < 2), "
             "(SELECT sum(n) FROM %s.card_counts WHERE kind = 2)",
             fx.schema, fx.schema, fx.schema, fx.schema);
    PGresult *res = PQexec(admin, sql);
    CHECK_STR(PQgetvalue(res, 0, 0), "36"); /* 17 owner words, 19 bank words */
    CHECK_STR(PQgetvalue(res, 0, 1), "17"); /* as test_cards.py's migration test finds */
    CHECK_STR(PQgetvalue(res, 0, 2), "16"); /* each card's BIN and tail */
    CHECK_STR(PQgetvalue(res, 0, 3), "17"); /* each owner word with its card's expiry */
    PQclear(res);
}

TEST(test_fixture_searches_of_test_cards_py)
{
    expect(&fx, "", NULL, BY_CREATED_DESC);
    same(&fx, "411111*", "c01,c02,c03");
    same(&fx, "number:411111*", "c01,c02,c03");
    same(&fx, "411111*1111", "c01,c02,c03");
    same(&fx, "*1111", "c01,c02,c03,c05");
    same(&fx, "*4444", "c06,c07");
    same(&fx, "411111XXXXXX1111", "c01,c02");
    same(&fx, "411111??????1111", "c01,c02");
    same(&fx, "378282XXXXX0005", "c04");
    same(&fx, "3782*", "c04,c05");
    same(&fx, "55555?*", "c06,c07");
    expect(&fx, "number:411111*", NULL, "c02,c01,c03");
    expect(&fx, "number:411111*", "createdAt,asc", "c03,c01,c02");
    expect(&fx, "number:555555*", NULL, "c06,c07");
    same(&fx, "4111111111111111", "c01");
    same(&fx, "number:\"4111 1111 1111 1111\"", "c01");
    same(&fx, "4111111111111112", "");
    same(&fx, "owner:john", "c01,c05");
    same(&fx, "owner:JOHN", "c01,c05");
    same(&fx, "owner:jo*", "c01,c02,c05,c07");
    same(&fx, "owner:\"john smith\"", "c01");
    same(&fx, "owner:smith", "c01,c03,c06");
    same(&fx, "owner:\"jane smith\"", "c03,c06");
    same(&fx, "owner:jose", "c07");
    same(&fx, "owner:jos\xc3\xa9", "c07");
    same(&fx, "bank:\"example bank\"", "c01,c02,c08");
    same(&fx, "bank:demo", "c06,c07");
    same(&fx, "cvv:123", "c01,c05");
    same(&fx, "cvv:1234", "c04");
    same(&fx, "leakId:L2", "c03,c04,c08");
    same(&fx, "leakId:l2", "");
    same(&fx, "expireDate:[2026-01-31 TO *]", "c01,c03,c05,c07,c08");
    same(&fx, "expireDate:{2026-01-31 TO *]", "c03,c07,c08");
    same(&fx, "expireDate:[* TO 2024-12-31]", "c04,c06");
    same(&fx, "expireDate:[* TO 2024-12-31}", "c06");
    same(&fx, "createdAt:2024-01-01", "c01,c05");
    same(&fx, "createdAt:[\"2024-01-01 00:00:01\" TO \"2024-02-01 09:30:00\"]", "c01,c02");
    same(&fx, "cvv:123 AND expireDate:[2026-01-01 TO *]", "c01,c05");
    same(&fx, "cvv:123 OR cvv:456 AND leakId:L1", "c01,c05,c02");
    same(&fx, "(cvv:123 OR cvv:456) AND leakId:L1", "c01,c02");
    same(&fx, "owner:smith bank:demo", "c06");
    same(&fx, "NOT leakId:L1", "c03,c04,c05,c06,c08");
    same(&fx, "!leakId:L1 AND NOT owner:smith", "c04,c05,c08");
    same(&fx, "411111* AND NOT owner:john", "c02,c03");
    same(&fx, "owner:nobody", "");
    same(&fx, "owner:smith AND expireDate:[2026-01-01 TO *]", "c01,c03");
}

TEST(test_fixture_sorts_and_pages)
{
    static const struct {
        const char *sort, *want;
    } cases[] = {
        {"cvssScore,desc", "c03,c07,c01,c05,c02,c06,c08,c04"},
        {"cvssScore", "c04,c08,c06,c02,c05,c01,c07,c03"},
        {"owner,asc", "c04,c06,c05,c01,c02,c07,c03,c08"},
        {"leakName,asc", "c01,c02,c07,c05,c06,c03,c04,c08"},
        {"leakSize,desc createdAt,asc", "c06,c05,c04,c03,c08,c07,c01,c02"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        expect(&fx, "", cases[i].sort, cases[i].want);
        char seen[8192] = "", ids[4096];
        int64_t n;
        for (int page = 0; page < 3; page++) {
            both(&fx, "", cases[i].sort, page, 3, ids, sizeof ids, &n);
            CHECK_INT(n, 8);
            if (ids[0])
                snprintf(seen + strlen(seen), sizeof seen - strlen(seen), "%s%s",
                         seen[0] ? "," : "", ids);
        }
        CHECK_STR(seen, cases[i].want);
    }
    char ids[4096];
    int64_t n;
    for (int page = 0; page < 4; page++) {
        both(&fx, "number:411111*", NULL, page, 1, ids, sizeof ids, &n);
        CHECK_INT(n, 3);
        CHECK_STR(ids, page == 0 ? "c02" : page == 1 ? "c01" : page == 2 ? "c03" : "");
    }
    both(&fx, "", NULL, 3, 3, ids, sizeof ids, &n);
    CHECK_STR(ids, "");
    CHECK_INT(n, 8);
}

/* ---- test_cards.py's digit edges and owner words ------------------------------------- */

static const char *const EDGES[] = {
    "4199999999999999", "4200000000000000", "4199990000009990", "4111119999990999",
    "4999990000000009", "5000000000000000", "4190000000001999", "4299990000000000",
    "4209999999991000", "3999990000000990", "4199999999990099",
};
#define NEDGES (sizeof EDGES / sizeof EDGES[0])

TEST(test_digit_prefixes_and_tails_at_range_edges)
{
    dataset d;
    if (!open_dataset(&d, "edges"))
        return;
    card_src cards[NEDGES];
    char ids[NEDGES][8], created[NEDGES][20];
    for (size_t i = 0; i < NEDGES; i++) {
        snprintf(ids[i], sizeof ids[i], "n%02zu", i);
        snprintf(created[i], sizeof created[i], "2024-01-%02zu 00:00:00", i + 1);
        cards[i] = (card_src){.id = ids[i], .created = created[i], .number = EDGES[i]};
    }
    load(&d, cards, NEDGES);
    static const char *const prefixes[] = {"4",  "41",     "419",  "4199", "41999",  "419999",
                                           "42", "420000", "4299", "49",   "499999", "5",
                                           "39", "3",      "9",    "499",  "43"};
    static const char *const tails[] = {"9",    "99",   "999",  "9999", "0",    "00",
                                        "000",  "0000", "1999", "0999", "9990", "1000",
                                        "0009", "0990", "0099", "1"};
    char query[64], want[256];
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0] + sizeof tails / sizeof tails[0];
         i++) {
        bool prefix = i < sizeof prefixes / sizeof prefixes[0];
        const char *p = prefix ? prefixes[i] : tails[i - sizeof prefixes / sizeof prefixes[0]];
        size_t len = 0, pl = strlen(p);
        want[0] = '\0';
        for (size_t j = 0; j < NEDGES; j++)
            if (prefix ? strncmp(EDGES[j], p, pl) == 0 : strcmp(EDGES[j] + 16 - pl, p) == 0)
                len += (size_t)snprintf(want + len, sizeof want - len, len ? ",%s" : "%s", ids[j]);
        snprintf(query, sizeof query, prefix ? "%s*" : "*%s", p);
        same(&d, query, want);
        snprintf(query, sizeof query, prefix ? "%s* AND NOT cvv:000" : "*%s AND NOT cvv:000", p);
        same(&d, query, want);
    }
    same(&d, "419*99", "n00,n06,n10");
    same(&d, "4199*9990", "n02");
    same(&d, "42*000", "n01,n07,n08");
    same(&d, "41999*0099", "n10");
    close_dataset(&d);
}

static const char *const OWNERS[][3] = {
    {"w01", "John Smith", "2026-01-31"},
    {"w02", "JOHN john Johnson", "2027-06-30"},
    {"w03", "J\xc3\xb6hn \xc3\x91\x61nd\xc3\xba", "2028-02-29"},
    {"w04", "john", NULL},
    {"w05", "Mary-John O'Neil", "2026-01-31"},
    {"w06", "Johnny Smith", "2029-12-31"},
    {"w07", "Smith, John", "2025-12-31"},
    {"w08", NULL, "2026-05-31"},
    {"w09", "john  smith", "2030-01-31"},
    {"w10", "\xc3\x89mile Zola", "2027-01-31"},
    {"w00", "Smith John", "2027-06-30"},
    {"w11", "John Smith-Jones", "2026-01-31"},
};
#define NOWNERS (sizeof OWNERS / sizeof OWNERS[0])

TEST(test_owner_word_with_expiry_counts_and_pages)
{
    dataset d;
    if (!open_dataset(&d, "owners"))
        return;
    /* and a word too long for a btree entry, which must not fail the import */
    static char long_owner[3100] = "Zed \xc3\xa9"
                                   "bcdefghijk"; /* then letters at random */
    for (uint32_t i = (uint32_t)strlen(long_owner), x = 1; i < 3000;
         i++, x = x * 1103515245 + 12345)
        long_owner[i] = (char)('a' + (x >> 16) % 26);
    strcat(long_owner, " Smith");
    card_src cards[NOWNERS + 1];
    char created[NOWNERS + 1][20], number[NOWNERS + 1][20];
    for (size_t i = 0; i <= NOWNERS; i++) {
        snprintf(created[i], sizeof created[i], "2024-01-%02zu 00:00:00", i + 1);
        snprintf(number[i], sizeof number[i], "41111100000%05zu", i);
        cards[i] = (card_src){.id = i < NOWNERS ? OWNERS[i][0] : "w12",
                              .created = created[i],
                              .number = number[i],
                              .owner = i < NOWNERS ? OWNERS[i][1] : long_owner,
                              .expire = i < NOWNERS ? OWNERS[i][2] : NULL};
    }
    load(&d, cards, NOWNERS + 1);
    expect(&d, "owner:john AND expireDate:[2026-01-01 TO *]", "expireDate,asc",
           "w01,w05,w11,w00,w02,w03,w09");
    expect(&d, "owner:john AND expireDate:[2026-01-01 TO *]", "expireDate,desc",
           "w09,w03,w02,w00,w11,w05,w01");
    static const char *const queries[] = {
        "owner:john AND expireDate:[2026-01-01 TO *]",
        "owner:john AND expireDate:[2026-01-31 TO 2028-02-29]",
        "owner:john AND expireDate:{2026-01-31 TO 2028-02-29}",
        "owner:john AND expireDate:[* TO 2026-01-31}",
        "owner:john AND expireDate:*",
        "owner:JOHN AND expireDate:[2020-01-01 TO *] AND expireDate:[* TO 2027-12-31]",
        "owner:smith AND expireDate:[2026-01-01 TO *]",
        "owner:nandu AND expireDate:[2020-01-01 TO *]",
        "owner:\xc3\xb1\x61nd\xc3\xba AND expireDate:[2020-01-01 TO *]",
        "owner:emile AND expireDate:[2027-01-31 TO 2027-01-31]",
        "owner:nobody AND expireDate:[2020-01-01 TO *]",
        "owner:o AND expireDate:*",
        "owner:\"smith jones\"",
        "owner:\"john smith\"",
        "owner:\"smith j*\"",
        "owner:\"john john johnson\"",
        "owner:\"mary john o neil\"",
        "owner:\"o'neil\"",
        "owner:\"neil o\"",
        "owner:joh*",
        "NOT owner:john",
        "NOT owner:\"john smith\"",
        "owner:\"zed ebcdefghijk*\"",
        "owner:\"zed ebcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz\"",
    };
    for (size_t i = 0; i < sizeof queries / sizeof queries[0]; i++) {
        static const char *const sorts[] = {"expireDate,asc", "expireDate,desc", NULL,
                                            "owner,asc expireDate,desc", "expireDate"};
        for (size_t k = 0; k < sizeof sorts / sizeof sorts[0]; k++) {
            char ids[4096];
            int64_t n;
            for (int page = 0; page < 5; page++)
                both(&d, queries[i], sorts[k], page, 2, ids, sizeof ids, &n);
        }
    }
    close_dataset(&d);
}

/* ---- random cards, random searches ----------------------------------------------------- */

static uint64_t rng = 88172645463325252u;

static unsigned pick(unsigned n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng % n);
}

#define PICK(a) ((a)[pick(sizeof(a) / sizeof((a)[0]))])

/* clang-format off */
static const char *const WORDS[] = {
    "John", "JOHN", "john", "Johnny", "J\xc3\xb6hn", "Smith", "Smith-Jones", "O'Neil", "Mary",
    "Jos\xc3\xa9", "N\xc3\xba\xc3\xb1\x65z", "\xc3\x91\x61nd\xc3\xba", "\xc3\x89mile", "jo",
    "Smithers", "Zo\xc3\xab", "stra\xc3\x9f\x65", "\xc7\x85\x65mal", "Jo-Jo", "smith",
    "Smith\xe2\x80\x99s", "\xc3\xbfves"};
/* clang-format on */
static const char *const BANKS[] = {
    "Example Bank", "Demo Bank", "Test National Bank", "Bank of Jo", "Cr\xc3\xa9\x64it Agricole",
    "bank"};
static const char *const BINS[] = {"411111", "411112", "555555", "378282",
                                   "601111", "419999", "420000"};
static const char *const LAST4[] = {"1111", "0005", "4444", "9999", "0990", "1000"};
static const char *const DATES[] = {"2023-01-31", "2024-12-31", "2025-06-30", "2026-01-31",
                                    "2026-06-30", "2027-12-31", "2030-01-31"};
static const char *const CVSS[] = {"2.5", "5", "7.5", "9.1", "0", "10"};

#define NRANDOM 400

typedef struct {
    card_src src;
    char id[8], created[20], number[20], owner[96], expire[11];
} random_card;

static void random_card_make(random_card *r, unsigned i)
{
    snprintf(r->id, sizeof r->id, "r%03u", (i * 37) % NRANDOM);
    snprintf(r->created, sizeof r->created, "2024-01-%02u %02u:00:00", 1 + pick(4), pick(3));
    unsigned len = (const unsigned[]){15, 16, 19}[pick(3)];
    size_t n = (size_t)snprintf(r->number, sizeof r->number, "%s", PICK(BINS));
    while (n < len - 4)
        r->number[n++] = (char)('0' + pick(10));
    snprintf(r->number + n, sizeof r->number - n, "%s", PICK(LAST4));
    size_t o = 0;
    for (unsigned w = 0, words = 1 + pick(3); w < words; w++)
        o += (size_t)snprintf(r->owner + o, sizeof r->owner - o, "%s%s",
                              w ? PICK(((const char *[]){" ", ", ", "  "})) : "", PICK(WORDS));
    r->src = (card_src){
        .id = r->id,
        .created = r->created,
        .number = r->number,
        .owner = pick(10) ? r->owner : NULL,
        .bank = pick(7) ? PICK(BANKS) : NULL,
        .cvv = pick(10) ? PICK(((const char *[]){"123", "456", "1234", "999"})) : NULL,
        .expire = pick(5) ? PICK(DATES) : NULL,
        .cvss = pick(5) ? PICK(CVSS) : NULL,
        .leak_id = pick(10) ? PICK(((const char *[]){"L1", "L2", "L3", "l2"})) : NULL,
        .leak_name = pick(4) ? PICK(((const char *[]){"Leak One", "Leak Two", "leak"})) : NULL,
        .publish = pick(3) ? PICK(DATES) : NULL,
        .discover = pick(3) ? PICK(DATES) : NULL,
        .size = pick(3) ? PICK(((const char *[]){"10", "20", "30", "0"})) : NULL,
        .tags = pick(2) ? "paid" : NULL,
    };
}

/* clang-format off */
static const char *const TERMS[] = {
    "owner:john", "owner:JOHN", "owner:jo*", "owner:smi*", "owner:\"john smith\"",
    "owner:\"smith jones\"", "owner:\"john sm*\"", "owner:nandu",
    "owner:\xc3\xb1\x61nd\xc3\xba", "owner:emile", "owner:\"o neil\"", "owner:stra\xc3\x9f\x65",
    "owner:strasse", "owner:zoe", "owner:\"jo jo\"", "owner:j\xc3\xb6*", "owner:\xc3\xa9mi*",
    "owner:smith\xe2\x80\x99s", "owner:\xc3\xbf*", "owner:\"smith s\"", "owner:\"o'ne*\"",
    "owner:\"john john\"", "owner:j*", "owner:\xc7\x86\x65mal", "owner:dz*", "bank:bank",
    "bank:\"demo bank\"", "bank:\"bank of\"*", "bank:credit", "bank:\"of jo\"", "411111*",
    "41111?*", "*1111", "*0990", "4*", "41*", "419999*", "42*", "411111*1111", "378282*0005",
    "555555??????4444", "411111XXXXXX1111", "*9?", "3782*", "55555?*", "*0", "4111?1*11",
    "411111XXXXXXXXX1111", "6*7", "cvv:123", "cvv:1234", "leakId:L1", "leakId:l2", "leakId:\xff",
    "leakId:L\xc3", "leakId:\xed\xa0\x80",
    "expireDate:[2026-01-31 TO *]", "expireDate:{2026-01-31 TO 2028-02-29}", "expireDate:*",
    "expireDate:[* TO 2025-06-30}", "createdAt:2024-01-02",
    "createdAt:[\"2024-01-01 01:00:00\" TO *]", "createdAt:{2024-01-01 TO 2024-01-03]",
};
/* clang-format on */

static size_t random_expr(char *out, size_t cap, int depth)
{
    size_t n = 0;
    unsigned kind = depth > 2 ? 0 : pick(5);
    if (pick(4) == 0)
        n += (size_t)snprintf(out + n, cap - n, "NOT ");
    if (kind < 3) {
        n += (size_t)snprintf(out + n, cap - n, "%s", PICK(TERMS));
        return n;
    }
    n += (size_t)snprintf(out + n, cap - n, "(");
    for (unsigned i = 0, kids = 2 + pick(2); i < kids; i++) {
        if (i)
            n += (size_t)snprintf(out + n, cap - n, "%s",
                                  PICK(((const char *[]){" AND ", " OR ", " ", " || "})));
        n += random_expr(out + n, cap - n, depth + 1);
    }
    n += (size_t)snprintf(out + n, cap - n, ")");
    return n;
}

static void random_sort(char *out, size_t cap)
{
    size_t n = 0;
    bool used[NSORTABLE] = {0};
    for (unsigned i = 0, keys = pick(4); i < keys; i++) {
        unsigned k = pick((unsigned)NSORTABLE);
        if (used[k])
            continue;
        used[k] = true;
        n += (size_t)snprintf(out + n, cap - n, "%s%s%s", n ? " " : "", SORTABLE[k].name,
                              pick(2) ? ",desc" : "");
    }
    if (n == 0)
        out[0] = '\0';
}

TEST(test_random_searches_agree_with_sqlite)
{
    dataset d;
    if (!open_dataset(&d, "random"))
        return;
    rng = getenv("BD_TEST_SEED") ? strtoull(getenv("BD_TEST_SEED"), NULL, 10) | 1 : rng;
    static random_card cards[NRANDOM];
    static card_src src[NRANDOM];
    for (unsigned i = 0; i < NRANDOM; i++) {
        random_card_make(&cards[i], i);
        src[i] = cards[i].src;
    }
    load(&d, src, NRANDOM);
    int searches = getenv("BD_TEST_SEARCHES") ? atoi(getenv("BD_TEST_SEARCHES")) : 3000;
    int before = compared, before_nonempty = nonempty;
    for (int i = 0; i < searches && differences < 20; i++) {
        char query[1024], sort[256], ids[4096];
        random_expr(query, sizeof query, 0);
        if (i % 10 == 0) /* an exact number or Hash: of a card that is there */
            snprintf(query, sizeof query, "%s%s", i % 20 ? "" : "NOT ",
                     cards[pick(NRANDOM)].number);
        random_sort(sort, sizeof sort);
        int64_t n;
        unsigned size = PICK(((const unsigned[]){1, 3, 7, 20, 100}));
        both(&d, query, sort[0] ? sort : NULL, (int)pick(4), (int)size, ids, sizeof ids, &n);
    }
    printf("     %d random searches compared, %d of them found cards\n", compared - before,
           nonempty - before_nonempty);
    close_dataset(&d);
}

TEST(test_prefix_end_is_the_next_code_point)
{
    static const char *const cases[][2] = {
        {"jo", "jp"},
        {"j\xc3\xa9", "j\xc3\xaa"},
        {"\xc3\xbf", "\xc4\x80"},
        {"a\x7f", "a\xc2\x80"},
        {"\xed\x9f\xbf", "\xee\x80\x80"}, /* U+D7FF: the surrogates are skipped */
        {"\xef\xbf\xbf", "\xf0\x90\x80\x80"},
        {"x\xf4\x8f\xbf\xbf", NULL}, /* U+10FFFF: nothing after it */
        {"\xbf", NULL},              /* not UTF-8 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        bd_buf out;
        bd_buf_init(&out, 64);
        bool ok = pg_card_prefix_end(cases[i][0], strlen(cases[i][0]), &out);
        CHECK_STR(ok ? out.data : NULL, cases[i][1]);
        bd_buf_free(&out);
    }
}

/* Cards of PostgreSQL's lookup tables (card_bins, card_owner_words: the routing of a Citus
 * cluster, docs/SCALING.md) that disagree with the cards, counted both ways: a lookup row
 * naming no such card (or one with another BIN, date or owner word), or a card missing its
 * rows. 0 when they agree. */
static int64_t lookup_rows_astray(const dataset *d)
{
    static const char owner_words[] =
        "SELECT DISTINCT w.word, c.expire_date, c.card_id FROM card_words w JOIN cards c "
        "ON c.id = w.id WHERE w.col = 0 AND c.expire_date IS NOT NULL";
    char sql[2048];
    snprintf(sql, sizeof sql,
             "SET search_path = %s; SELECT "
             "(SELECT count(*) FROM card_bins b WHERE NOT EXISTS (SELECT 1 FROM cards c WHERE "
             "c.card_id = b.card_id AND c.bin = b.bin AND c.created_at = b.created_at)) + "
             "(SELECT count(*) FROM cards c WHERE NOT EXISTS (SELECT 1 FROM card_bins b WHERE "
             "b.card_id = c.card_id)) + "
             "(SELECT count(*) FROM (SELECT word, expire_date, card_id FROM card_owner_words "
             "EXCEPT ALL (%s)) x) + "
             "(SELECT count(*) FROM ((%s) EXCEPT ALL SELECT word, expire_date, card_id "
             "FROM card_owner_words) y)",
             d->schema, owner_words, owner_words);
    PGresult *res = PQexec(admin, sql);
    int64_t n =
        PQresultStatus(res) == PGRES_TUPLES_OK ? strtoll(PQgetvalue(res, 0, 0), NULL, 10) : -1;
    PQclear(res);
    PQclear(PQexec(admin, "RESET search_path"));
    return n;
}

/* Loads cards into both stores in one bulk load each. */
static void load_bulk(dataset *d, const card_src *cards, size_t n)
{
    bd_store *stores[] = {d->lite, d->pg};
    for (size_t k = 0; k < 2; k++) {
        bd_store *s = stores[k];
        CHECK_INT(s->ops->begin(s), BD_OK);
        CHECK_INT(s->ops->bulk_begin(s, BD_BULK_CARDS), BD_OK);
        for (size_t i = 0; i < n; i++) {
            bd_card_in c;
            make_card(&cards[i], &c);
            bool ins = false;
            CHECK_INT(s->ops->card_put(s, &c, &ins), BD_OK);
        }
        CHECK_INT(s->ops->bulk_end(s, BD_BULK_CARDS), BD_OK);
        CHECK_INT(s->ops->commit(s), BD_OK);
    }
}

/* Routed as on a Citus coordinator, a BIN page in date order and an owner word's page in
 * expiry order are read off lookup tables (card_bins, card_owner_words) and their cards
 * fetched by card id:
 * every page of every BIN and of owner words within expiry ranges, in both directions, is
 * SQLite's, after cards went in by a bulk load holding duplicates (which keep the first card
 * of an id: the lookup rows must be the first's), then by a bulk load into a table that
 * holds cards, and by batches; the lookup rows agree with the cards throughout. */
TEST(test_routed_pages_agree_with_sqlite_after_bulk_loads_with_duplicates)
{
    dataset d;
    if (!open_dataset_as(&d, "routed", true))
        return;
    CHECK(pg_of(d.pg)->routed);
    static random_card cards[NRANDOM + 100];
    static card_src src[NRANDOM + 100];
    for (unsigned i = 0; i < NRANDOM + 100; i++) {
        random_card_make(&cards[i], i % NRANDOM); /* the last 100: ids again, other cards */
        src[i] = cards[i].src;
    }
    /* into the empty table: cards 0-99, then other cards with the ids of 0-49 */
    static card_src first[150], second[NRANDOM - 100 + 25];
    memcpy(first, src, 100 * sizeof *src);
    memcpy(first + 100, src + NRANDOM, 50 * sizeof *src);
    load_bulk(&d, first, 150);
    CHECK_INT(lookup_rows_astray(&d), 0);
    /* into a table holding cards: cards 100-399, then the ids of 50-74 again */
    memcpy(second, src + 100, (NRANDOM - 100) * sizeof *src);
    memcpy(second + (NRANDOM - 100), src + NRANDOM + 50, 25 * sizeof *src);
    load_bulk(&d, second, NRANDOM - 100 + 25);
    CHECK_INT(lookup_rows_astray(&d), 0);
    /* a batch: the ids of 75-99 again (PostgreSQL finds duplicates at the commit) */
    bd_store *stores[] = {d.lite, d.pg};
    for (size_t k = 0; k < 2; k++) {
        CHECK_INT(stores[k]->ops->begin(stores[k]), BD_OK);
        for (size_t i = NRANDOM + 75; i < NRANDOM + 100; i++) {
            bd_card_in c;
            make_card(&src[i], &c);
            bool ins = false;
            CHECK_INT(stores[k]->ops->card_put(stores[k], &c, &ins), BD_OK);
        }
        CHECK_INT(stores[k]->ops->commit(stores[k]), BD_OK);
    }
    CHECK_INT(lookup_rows_astray(&d), 0);
    static const char *const sorts[] = {"createdAt", "createdAt,desc"};
    static const char *const expiry_sorts[] = {"expireDate", "expireDate,desc"};
    static const unsigned sizes[] = {1, 7, 20};
    char query[256], ids[4096];
    int64_t n;
    for (size_t b = 0; b < sizeof BINS / sizeof BINS[0]; b++)
        for (size_t o = 0; o < 2; o++)
            for (size_t z = 0; z < 3; z++)
                for (int page = 0; page < 4; page++) {
                    snprintf(query, sizeof query, "number:%s*", BINS[b]);
                    both(&d, query, sorts[o], page, (int)sizes[z], ids, sizeof ids, &n);
                }
    static const char *const words[] = {"john", "smith", "mary", "jo", "zoe", "nobody"};
    static const char *const ranges[] = {"[2025-01-01 TO *]", "[* TO 2026-06-30]",
                                         "{2024-12-31 TO 2027-12-31}", "*"};
    for (size_t w = 0; w < sizeof words / sizeof words[0]; w++)
        for (size_t r = 0; r < sizeof ranges / sizeof ranges[0]; r++)
            for (size_t o = 0; o < 2; o++)
                for (int page = 0; page < 3; page++) {
                    snprintf(query, sizeof query, "owner:%s AND expireDate:%s", words[w],
                             ranges[r]);
                    both(&d, query, expiry_sorts[o], page, 7, ids, sizeof ids, &n);
                }
    close_dataset(&d);
}

int main(void)
{
    base_uri = getenv("BREACHD_TEST_PG_URI");
    if (!base_uri || !*base_uri) {
        printf("skipped: BREACHD_TEST_PG_URI is not set\n");
        return 0;
    }
    if (sodium_init() < 0)
        return 1;
    admin = PQconnectdb(base_uri);
    if (PQstatus(admin) != CONNECTION_OK) {
        fprintf(stderr, "cannot connect to the test server: %s", PQerrorMessage(admin));
        return 1;
    }
    PQclear(PQexec(admin, "SET client_min_messages = warning"));
    snprintf(tmpdir, sizeof tmpdir, "/tmp/bd-test-cards-XXXXXX");
    if (!mkdtemp(tmpdir))
        return 1;
    randombytes_buf(secret, sizeof secret);
    RUN(test_prefix_end_is_the_next_code_point);
    if (open_dataset(&fx, "fixture")) {
        RUN(test_fixture_loads_the_same_and_twice_adds_nothing);
        RUN(test_fixture_searches_of_test_cards_py);
        RUN(test_fixture_sorts_and_pages);
    }
    close_dataset(&fx);
    RUN(test_digit_prefixes_and_tails_at_range_edges);
    RUN(test_owner_word_with_expiry_counts_and_pages);
    RUN(test_random_searches_agree_with_sqlite);
    RUN(test_routed_pages_agree_with_sqlite_after_bulk_loads_with_duplicates);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    CHECK_INT(system(cmd), 0);
    PQfinish(admin);
    return TEST_EXIT();
}
