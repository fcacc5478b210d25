/* The words the record contract suites (test_store_contract.c, test_store_writes_contract.c)
 * are written in: breaches and records to put, searches to run, and what a store holds as
 * text to compare with an exact expected value. Record ids are the backend's: only their
 * order is promised, so pages are compared by the records' emails. Through store.h alone.
 * Include once, after store_fixture.h. */
#ifndef BD_TESTS_RECORD_FIXTURE_H
#define BD_TESTS_RECORD_FIXTURE_H

#include "store_fixture.h"

#define OLD "11111111-1111-4111-8111-111111111111" /* breach dates: see breaches() */
#define MID "22222222-2222-4222-8222-222222222222"
#define NEW "33333333-3333-4333-8333-333333333333"
#define ABSENT "44444444-4444-4444-8444-444444444444" /* never put */

static const char P1[32] = "password-one-hmac-32-bytes-long";
static const char P2[32] = "password-two-hmac\0with-a-nul-in";

static inline void put_breach(bd_store *s, const char *uuid, const char *name, int32_t date,
                              int64_t pwned)
{
    bd_breach_in b = {
        .source_name = bd_slice_from(name), .date_leaked = date, .pwned_count = pwned};
    memcpy(b.uuid, uuid, BD_UUID_LEN + 1);
    bool ins = false;
    CHECK_INT(bd_store_breach_put(s, &b, &ins), BD_OK);
    CHECK(ins);
}

/* The three breaches most tests use: Old (2010, 100 pwned as imported), Mid (2015) and New
 * (2020), whose pwned counts are derived. */
static inline void breaches(bd_store *s)
{
    put_breach(s, OLD, "Old", 20100101, 100);
    put_breach(s, MID, "Mid", 20150101, -1);
    put_breach(s, NEW, "New", 20200101, -1);
}

/* A record of breach with email (and its domain, the part after '@'). n is its content:
 * two records with the same n are the same record, so the second put is a duplicate. */
static inline bd_record_in record(const char *breach, const char *email, int n)
{
    bd_record_in r;
    memset(&r, 0, sizeof r);
    memcpy(r.breach_uuid, breach, BD_UUID_LEN + 1);
    r.email = bd_slice_from(email);
    const char *at = email ? strchr(email, '@') : NULL;
    r.email_domain = bd_slice_from(at ? at + 1 : NULL);
    r.severity = BD_SEVERITY_LOW;
    memcpy(r.dedup, &n, sizeof n);
    return r;
}

/* Puts r; returns whether it went in (false: a duplicate). */
static inline bool put(bd_store *s, const bd_record_in *r)
{
    bool ins = false;
    CHECK_INT(bd_store_record_put(s, r, &ins), BD_OK);
    return ins;
}

static inline void put_email(bd_store *s, const char *breach, const char *email, int n)
{
    bd_record_in r = record(breach, email, n);
    CHECK(put(s, &r));
}

static inline bd_record_query by_bytes(bd_field f, const char *key, size_t len)
{
    bd_record_query q;
    memset(&q, 0, sizeof q);
    q.field = f;
    q.key = (bd_slice){key, len};
    q.limit = 100;
    return q;
}

static inline bd_record_query by(bd_field f, const char *key)
{
    return by_bytes(f, key, strlen(key));
}

/* What the last search handed on: the records' emails ("a@x,b@x") and breach dates in
 * order, their breach ids, and the keyset position of the last one. */
static struct {
    char emails[1024], dates[512];
    int rows;
    int32_t last_date;
    int64_t last_id;
    int64_t breach_id[8];
} seen;

/* Appends v to the comma-separated list in out, "~" for NULL. */
static inline void append(char *out, size_t cap, bd_slice v)
{
    if (!v.ptr)
        v = BD_SLICE_LIT("~");
    size_t n = strlen(out);
    snprintf(out + n, cap - n, "%s%.*s", n ? "," : "", (int)v.len, v.ptr);
}

static inline int take_record(void *ctx, const bd_record_row *row)
{
    (void)ctx;
    append(seen.emails, sizeof seen.emails, row->email);
    char date[16];
    snprintf(date, sizeof date, "%d", (int)row->breach_date);
    append(seen.dates, sizeof seen.dates, bd_slice_from(date));
    if (seen.rows < 8)
        seen.breach_id[seen.rows] = row->breach_id;
    seen.rows++;
    seen.last_date = row->breach_date;
    seen.last_id = row->id;
    return 0;
}

/* The emails of the page q finds (no count asked). */
static inline const char *page(bd_store *s, bd_record_query q)
{
    memset(&seen, 0, sizeof seen);
    CHECK_INT(bd_store_record_search(s, &q, take_record, NULL, NULL), BD_OK);
    return seen.emails;
}

/* A first page of q with its found count: "a@x,b@x /5". */
static inline const char *counted(bd_store *s, bd_record_query q)
{
    static char out[1100];
    memset(&seen, 0, sizeof seen);
    int64_t n = -1;
    CHECK_INT(bd_store_record_search(s, &q, take_record, NULL, &n), BD_OK);
    snprintf(out, sizeof out, "%s /%lld", seen.emails, (long long)n);
    return out;
}

/* Every record matching q, counted through a first page of one record: a full page, so
 * the count is the backend's own (for a whole domain, its per-domain count). */
static inline int64_t found(bd_store *s, bd_record_query q)
{
    q.limit = 1;
    q.has_after = false;
    int64_t n = -1;
    memset(&seen, 0, sizeof seen);
    CHECK_INT(bd_store_record_search(s, &q, take_record, NULL, &n), BD_OK);
    return n;
}

static inline int64_t domain_found(bd_store *s, const char *domain)
{
    return found(s, by(BD_FIELD_EMAIL_DOMAIN, domain));
}

static char text[1024]; /* what the last listing below handed on */

/* Appends "name/date/pwned"; a non-NULL ctx stops the listing after the first. */
static inline int take_breach(void *ctx, const bd_breach_row *b)
{
    size_t n = strlen(text);
    snprintf(text + n, sizeof text - n, "%s%.*s/%d/%lld", n ? "," : "", (int)b->source_name.len,
             b->source_name.ptr, (int)b->date_leaked, (long long)b->pwned_count);
    return ctx != NULL;
}

/* "name/date/pwned,..." of bd_store_breach_list. */
static inline const char *breach_list(bd_store *s, int limit)
{
    text[0] = '\0';
    CHECK_INT(bd_store_breach_list(s, limit, take_breach, NULL), BD_OK);
    return text;
}

/* Appends "name=records/pwned;". */
static inline int take_stats(void *ctx, const bd_stats_row *row)
{
    (void)ctx;
    size_t n = strlen(text);
    snprintf(text + n, sizeof text - n, "%.*s=%lld/%lld;", (int)row->source_name.len,
             row->source_name.ptr, (long long)row->records, (long long)row->pwned_count);
    return 0;
}

/* "name=records/pwned;...records N, cards M" of bd_store_stats. */
static inline const char *stats(bd_store *s)
{
    int64_t records = -1, cards = -1;
    text[0] = '\0';
    CHECK_INT(bd_store_stats(s, take_stats, NULL, &records, &cards), BD_OK);
    size_t n = strlen(text);
    snprintf(text + n, sizeof text - n, "records %lld, cards %lld", (long long)records,
             (long long)cards);
    return text;
}

static inline int64_t key_generation(bd_store *s)
{
    int64_t g = -1;
    CHECK_INT(bd_store_key_generation(s, &g), BD_OK);
    return g;
}

/* A standard key whose hash is 32 bytes of tag. */
static inline void add_key(bd_store *s, const char *name, uint8_t tag, int64_t *id)
{
    bd_key_row k = {.name = bd_slice_from(name),
                    .plan = BD_SLICE_LIT("standard"),
                    .rate_per_hour = 1000,
                    .exact_per_day = 20,
                    .created_at = 1700000000};
    memset(k.hash, tag, sizeof k.hash);
    CHECK_INT(bd_store_key_add(s, &k, id), BD_OK);
}

/* What a reader sees of a store, as one text: meta "marker", the key generation, breaches,
 * statistics, the domains a, b and t.example (first page with its count, then the count
 * of a full first page) and the records with password P1. */
static inline const char *content(bd_store *s)
{
    static char out[4096];
    char v[16] = "~";
    bd_store_meta_get(s, "marker", v, sizeof v);
    int n = snprintf(out, sizeof out, "meta %s | keys %lld | %s | ", v,
                     (long long)key_generation(s), breach_list(s, 0));
    n += snprintf(out + n, sizeof out - n, "%s | ", stats(s));
    const char *domains[] = {"a.example", "b.example", "t.example"};
    for (int i = 0; i < 3; i++) {
        n += snprintf(out + n, sizeof out - n, "%s %s | ", domains[i],
                      counted(s, by(BD_FIELD_EMAIL_DOMAIN, domains[i])));
        n += snprintf(out + n, sizeof out - n, "%lld | ", (long long)domain_found(s, domains[i]));
    }
    snprintf(out + n, sizeof out - n, "P1 %s", counted(s, by_bytes(BD_FIELD_PASSWORD, P1, 32)));
    return out;
}

#endif
