/* SQLite store: schema creation, idempotent inserts, keyset order and index choice. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/store.h"
#include "test.h"

static char dir[] = "/tmp/breachd-store-XXXXXX";
static char path[256];

static bd_store *fresh(void)
{
    static int n;
    snprintf(path, sizeof path, "%s/s%d.db", dir, n++);
    bd_store *s = NULL;
    char why[256];
    if (bd_store_open(path, BD_STORE_WRITE | BD_STORE_CREATE, &s, why, sizeof why) != BD_OK)
        fprintf(stderr, "%s\n", why);
    return s;
}

static void add_breach(bd_store *s, const char *uuid, int32_t date)
{
    bd_breach_in b = {.source_name = BD_SLICE_LIT("B"), .date_leaked = date, .pwned_count = -1};
    memcpy(b.uuid, uuid, BD_UUID_LEN + 1);
    bool ins;
    CHECK_INT(bd_store_breach_put(s, &b, &ins), BD_OK);
}

static void add_record(bd_store *s, const char *uuid, const char *email, const char *domain,
                       const char *pw_mac, int n)
{
    bd_record_in r;
    memset(&r, 0, sizeof r);
    memcpy(r.breach_uuid, uuid, BD_UUID_LEN + 1);
    r.email = bd_slice_from(email);
    r.email_domain = bd_slice_from(domain);
    if (pw_mac)
        r.password_hmac = (bd_slice){pw_mac, 32};
    r.severity = BD_SEVERITY_LOW;
    memcpy(r.dedup, &n, sizeof n);
    memcpy(r.dedup + 8, email, strlen(email) < 8 ? strlen(email) : 8);
    bool ins;
    CHECK_INT(bd_store_record_put(s, &r, &ins), BD_OK);
    CHECK(ins);
}

static int collect_ids(void *ctx, const bd_record_row *row)
{
    int64_t *ids = ctx;
    ids[++ids[0]] = row->id;
    return 0;
}

TEST(test_store_open_without_create_reports_missing_store)
{
    bd_store *s = NULL;
    char why[256], p[300];
    snprintf(p, sizeof p, "%s/missing.db", dir);
    CHECK(bd_store_open(p, BD_STORE_READ, &s, why, sizeof why) != BD_OK);
    CHECK(s == NULL);
    CHECK(access(p, F_OK) != 0);
}

TEST(test_store_breach_put_is_idempotent)
{
    bd_store *s = fresh();
    bd_breach_in b = {.uuid = "11111111-1111-4111-8111-111111111111",
                      .source_name = BD_SLICE_LIT("A"),
                      .date_leaked = 20200101,
                      .pwned_count = 5};
    bool ins;
    CHECK_INT(bd_store_breach_put(s, &b, &ins), BD_OK);
    CHECK(ins);
    CHECK_INT(bd_store_breach_put(s, &b, &ins), BD_OK);
    CHECK(!ins);
    bd_store_close(s);
}

TEST(test_store_rare_filter_value_drives_the_lookup)
{
    bd_store *s = fresh();
    const char *u = "22222222-2222-4222-8222-222222222222";
    add_breach(s, u, 20210101);
    char rare[32], common[32], email[64];
    memset(rare, 'R', 32);
    memset(common, 'C', 32);
    CHECK_INT(bd_store_begin(s), BD_OK);
    for (int i = 0; i < 3000; i++) {
        snprintf(email, sizeof email, "u%d@big.example", i);
        add_record(s, u, email, "big.example", i % 1000 == 7 ? rare : common, i);
    }
    CHECK_INT(bd_store_commit(s), BD_OK);
    bd_record_query q;
    memset(&q, 0, sizeof q);
    q.field = BD_FIELD_EMAIL_DOMAIN;
    q.key = BD_SLICE_LIT("big.example");
    q.filter[BD_FIELD_PASSWORD].mode = BD_FILTER_EQUALS;
    q.filter[BD_FIELD_PASSWORD].key = (bd_slice){rare, 32};
    CHECK_INT(bd_store_record_plan(s, &q), BD_OK);
    CHECK_INT(q.driver, BD_FIELD_PASSWORD);
    int64_t n = 0;
    CHECK_INT(bd_store_record_count(s, &q, &n), BD_OK);
    CHECK_INT(n, 3);
    /* The common value does not win over the domain when it is no more selective. */
    q.filter[BD_FIELD_PASSWORD].key = (bd_slice){common, 32};
    CHECK_INT(bd_store_record_plan(s, &q), BD_OK);
    CHECK_INT(q.driver, BD_FIELD_EMAIL_DOMAIN);
    CHECK_INT(bd_store_record_count(s, &q, &n), BD_OK);
    CHECK_INT(n, 2997);
    bd_store_close(s);
}

TEST(test_store_keyset_pages_follow_date_then_id_descending)
{
    bd_store *s = fresh();
    const char *old = "33333333-3333-4333-8333-333333333333";
    const char *new = "44444444-4444-4444-8444-444444444444";
    add_breach(s, old, 20100101);
    add_breach(s, new, 20200101);
    add_record(s, old, "a@x.example", "x.example", NULL, 1); /* id 1 */
    add_record(s, new, "b@x.example", "x.example", NULL, 2); /* id 2 */
    add_record(s, old, "c@x.example", "x.example", NULL, 3); /* id 3 */
    add_record(s, new, "d@x.example", "x.example", NULL, 4); /* id 4 */
    bd_record_query q;
    memset(&q, 0, sizeof q);
    q.field = BD_FIELD_EMAIL_DOMAIN;
    q.key = BD_SLICE_LIT("x.example");
    q.limit = 3;
    CHECK_INT(bd_store_record_plan(s, &q), BD_OK);
    int64_t ids[8] = {0};
    CHECK_INT(bd_store_record_find(s, &q, collect_ids, ids), BD_OK);
    CHECK_INT(ids[0], 3);
    CHECK_INT(ids[1], 4);
    CHECK_INT(ids[2], 2);
    CHECK_INT(ids[3], 3);
    q.has_after = true;
    q.after_date = 20100101;
    q.after_id = 3;
    memset(ids, 0, sizeof ids);
    CHECK_INT(bd_store_record_find(s, &q, collect_ids, ids), BD_OK);
    CHECK_INT(ids[0], 1);
    CHECK_INT(ids[1], 1);
    bd_store_close(s);
}

int main(void)
{
    if (!mkdtemp(dir))
        return 1;
    RUN(test_store_open_without_create_reports_missing_store);
    RUN(test_store_breach_put_is_idempotent);
    RUN(test_store_rare_filter_value_drives_the_lookup);
    RUN(test_store_keyset_pages_follow_date_then_id_descending);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        return 1;
    return TEST_EXIT();
}
