/* The order a window of checked records is written in (src/ingest/stage_order.c): rejected
 * lines first, then by email domain, breach and email, each run in line order. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/import_impl.h"
#include "test.h"

#define BREACH_A "11111111-1111-4111-8111-111111111111"
#define BREACH_B "22222222-2222-4222-8222-222222222222"

static bd_slice s(const char *v)
{
    return v ? bd_slice_from(v) : (bd_slice){NULL, 0};
}

/* A window of records, one per email ("" for a rejected line, NULL for no email). */
static stage_batch *window(const char *const *emails, size_t n)
{
    stage_batch *b = calloc(1, sizeof *b);
    b->cap = n;
    b->n = n;
    b->rows = calloc(n, sizeof *b->rows);
    b->order = calloc(n, sizeof *b->order);
    for (size_t i = 0; i < n; i++) {
        staged *row = &b->rows[i];
        row->line = i + 1;
        if (emails[i] && !emails[i][0]) {
            row->rejected = true;
            continue;
        }
        snprintf(row->u.record.breach_uuid, sizeof row->u.record.breach_uuid, "%s", BREACH_A);
        row->u.record.email = s(emails[i]);
        const char *at = emails[i] ? strchr(emails[i], '@') : NULL;
        row->u.record.email_domain = s(at ? at + 1 : NULL);
    }
    return b;
}

static void window_free(stage_batch *b)
{
    free(b->rows);
    free(b->order);
    free(b);
}

/* The written order as the lines' numbers, e.g. "3 1 2". */
static const char *written(const stage_batch *b)
{
    static char out[256];
    size_t used = 0;
    out[0] = '\0';
    for (size_t i = 0; i < b->n && used < sizeof out; i++)
        used += (size_t)snprintf(out + used, sizeof out - used, i ? " %llu" : "%llu",
                                 (unsigned long long)b->order[i]->line);
    return out;
}

TEST(test_a_window_is_written_by_domain_then_email)
{
    const char *const emails[] = {"zed@b.example", "amy@a.example", "bob@b.example",
                                  "amy@c.example", "amy@b.example", "cat@a.example"};
    stage_batch *b = window(emails, 6);
    bd_import_order_window(b);
    CHECK_STR(written(b), "2 6 5 3 1 4");
    window_free(b);
}

TEST(test_within_a_domain_each_breach_s_records_go_together)
{
    const char *const emails[] = {"amy@a.example", "bob@a.example", "cat@a.example",
                                  "amy@b.example", "dan@a.example"};
    stage_batch *b = window(emails, 5);
    /* lines 1, 3 and 4 from breach B, 2 and 5 from A */
    snprintf(b->rows[0].u.record.breach_uuid, BD_UUID_LEN + 1, "%s", BREACH_B);
    snprintf(b->rows[2].u.record.breach_uuid, BD_UUID_LEN + 1, "%s", BREACH_B);
    snprintf(b->rows[3].u.record.breach_uuid, BD_UUID_LEN + 1, "%s", BREACH_B);
    bd_import_order_window(b);
    CHECK_STR(written(b), "2 5 1 3 4");
    window_free(b);
}

TEST(test_rejected_lines_come_first_and_equal_keys_keep_the_files_order)
{
    const char *const emails[] = {
        "amy@a.example", "", "bob@a.example", "amy@a.example", NULL, "", NULL};
    stage_batch *b = window(emails, 7);
    bd_import_order_window(b);
    /* the rejected lines 2 and 6, then the records without an email (5, 7), then a.example's
     * by email, amy's two in their lines' order */
    CHECK_STR(written(b), "2 6 5 7 1 4 3");
    window_free(b);
}

TEST(test_a_longer_domain_sorts_after_its_prefix)
{
    const char *const emails[] = {"x@ab.example", "x@a.example", "x@ab.exampl", "y@a.example"};
    stage_batch *b = window(emails, 4);
    bd_import_order_window(b);
    CHECK_STR(written(b), "2 4 3 1");
    window_free(b);
}

TEST(test_one_row_and_none)
{
    const char *const emails[] = {"amy@a.example"};
    stage_batch *b = window(emails, 1);
    bd_import_order_window(b);
    CHECK_STR(written(b), "1");
    b->n = 0;
    bd_import_order_window(b);
    CHECK_STR(written(b), "");
    window_free(b);
}

/* The order by comparing each pair of rows' strings, as the definition says. */
static int reference_cmp(const void *pa, const void *pb)
{
    const staged *a = *(const staged *const *)pa, *b = *(const staged *const *)pb;
    if (a->rejected != b->rejected)
        return a->rejected ? -1 : 1;
    if (!a->rejected) {
        const bd_record_in *x = &a->u.record, *y = &b->u.record;
        bd_slice p = x->email_domain, q = y->email_domain;
        size_t n = p.len < q.len ? p.len : q.len;
        int c = n ? memcmp(p.ptr, q.ptr, n) : 0;
        if (!c)
            c = (p.len > q.len) - (p.len < q.len);
        if (!c)
            c = strcmp(x->breach_uuid, y->breach_uuid);
        if (!c) {
            p = x->email, q = y->email;
            n = p.len < q.len ? p.len : q.len;
            c = n ? memcmp(p.ptr, q.ptr, n) : 0;
            if (!c)
                c = (p.len > q.len) - (p.len < q.len);
        }
        if (c)
            return c;
    }
    return (a > b) - (a < b);
}

/* Thousands of rows over hundreds of domains (some prefixes of others), three breaches,
 * repeated emails, rejected lines and rows without an email: the written order is the
 * definition's, row for row. */
TEST(test_a_large_window_is_in_the_definition_s_order)
{
    enum { N = 5000 };
    static char text[N][48];
    static const char *emails[N];
    srand(7);
    for (int i = 0; i < N; i++) {
        int r = rand() % 100;
        if (r < 3)
            emails[i] = "";
        else if (r < 6)
            emails[i] = NULL;
        else {
            int d = rand() % 300;
            snprintf(text[i], sizeof text[i], "u%d@d%d.ex%s", rand() % 50, d, d % 7 ? "ample" : "");
            emails[i] = text[i];
        }
    }
    stage_batch *b = window(emails, N);
    const char *breaches[] = {BREACH_A, BREACH_B, "33333333-3333-4333-8333-333333333333"};
    for (int i = 0; i < N; i++)
        if (!b->rows[i].rejected)
            snprintf(b->rows[i].u.record.breach_uuid, BD_UUID_LEN + 1, "%s", breaches[i % 3]);
    bd_import_order_window(b);
    const staged **want = malloc(N * sizeof *want);
    for (int i = 0; i < N; i++)
        want[i] = &b->rows[i];
    qsort(want, N, sizeof *want, reference_cmp);
    int same = 0;
    for (int i = 0; i < N; i++)
        same += b->order[i] == want[i];
    CHECK_INT(same, N);
    free(want);
    window_free(b);
}

int main(void)
{
    RUN(test_a_window_is_written_by_domain_then_email);
    RUN(test_within_a_domain_each_breach_s_records_go_together);
    RUN(test_rejected_lines_come_first_and_equal_keys_keep_the_files_order);
    RUN(test_a_longer_domain_sorts_after_its_prefix);
    RUN(test_one_row_and_none);
    RUN(test_a_large_window_is_in_the_definition_s_order);
    return TEST_EXIT();
}
