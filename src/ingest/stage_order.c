/* The order a window of checked records is written in: by email domain, then breach, then
 * email, each run in line order; the lines refused when read first, in line order, so that they are
 * reported in the file's order (a line the writer refuses, for a breach that does not exist,
 * is reported when its turn comes).
 *
 * Why: a record's id (SQLite's row id, the order of PostgreSQL's heap) is the order it is
 * written in. In the file's order a domain page of 100 records reads 100 table pages, each
 * from a different place of the store, and the more so the larger the store: that page was
 * half of a domain search's CPU at 1M records, and it grows with the corpus (scenario 2 of
 * the benchmark, issue 31). Written by domain within a window, a domain's records in that
 * window get consecutive ids, and a page reads a few table pages. A page lists one breach's
 * records before the next's (newest breach first), so within a domain they go by breach: in
 * a file of many breaches that put a big domain's page on 1-2 table pages per window rather
 * than spread over all of the domain's (1M records, one connection, p50: file order 260 us,
 * by domain and email 213-220, by domain, breach and email 206-207; scenario 1 unchanged).
 * The window bounds what the importer holds (STAGE_WINDOW_ROWS, import_impl.h). */
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/import_impl.h"

static int slice_cmp(bd_slice a, bd_slice b)
{
    size_t n = a.len < b.len ? a.len : b.len;
    int c = n ? memcmp(a.ptr, b.ptr, n) : 0;
    return c ? c : (a.len > b.len) - (a.len < b.len);
}

/* A row to sort: its domain's and breach's ranks among the window's, packed so that one
 * integer comparison decides between rows of different domains or breaches (rejected rows
 * rank 0, before all); the row itself is read only to order one group's emails. Comparing
 * the rows' own strings, each a cache miss into a 400-byte row, was about a tenth of the
 * checking thread's time in a 1M-record import. */
typedef struct {
    uint64_t rank;
    const staged *row;
} sort_entry;

static int entry_cmp(const void *pa, const void *pb)
{
    const sort_entry *a = pa, *b = pb;
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    if (a->rank) {
        int c = slice_cmp(a->row->u.record.email, b->row->u.record.email);
        if (c)
            return c;
    }
    return (a->row > b->row) - (a->row < b->row); /* the rows' array is in line order */
}

/* The distinct values of one key of a window (domains, or breaches), and each row's. */
typedef struct {
    bd_slice *value;  /* distinct values, in order of first sight, then sorted */
    uint32_t *rank;   /* by first-sight index: its rank once sorted */
    uint32_t *slot;   /* hash table of first-sight index + 1 */
    uint32_t *of_row; /* each row's first-sight index */
    size_t n, cap;
    /* the values come from the file: a keyed hash, so that no file can make them collide */
    unsigned char key[crypto_shorthash_KEYBYTES];
} distinct;

static bool distinct_init(distinct *d, size_t rows)
{
    d->cap = 16;
    while (d->cap < 2 * rows)
        d->cap *= 2;
    d->n = 0;
    randombytes_buf(d->key, sizeof d->key);
    d->value = malloc(rows * sizeof *d->value + 1);
    d->rank = malloc(rows * sizeof *d->rank + 1);
    d->slot = calloc(d->cap, sizeof *d->slot);
    d->of_row = malloc(rows * sizeof *d->of_row + 1);
    return d->value && d->rank && d->slot && d->of_row;
}

static void distinct_free(distinct *d)
{
    free(d->value);
    free(d->rank);
    free(d->slot);
    free(d->of_row);
}

static uint32_t distinct_add(distinct *d, bd_slice v)
{
    uint64_t h;
    crypto_shorthash((unsigned char *)&h, (const unsigned char *)(v.len ? v.ptr : ""), v.len,
                     d->key);
    size_t i = (size_t)h & (d->cap - 1);
    for (; d->slot[i]; i = (i + 1) & (d->cap - 1)) {
        bd_slice w = d->value[d->slot[i] - 1];
        if (w.len == v.len && (!v.len || memcmp(w.ptr, v.ptr, v.len) == 0))
            return d->slot[i] - 1;
    }
    d->value[d->n] = v;
    d->slot[i] = (uint32_t)++d->n;
    return (uint32_t)(d->n - 1);
}

static int value_cmp(const void *pa, const void *pb)
{
    return slice_cmp(**(const bd_slice *const *)pa, **(const bd_slice *const *)pb);
}

/* Ranks the distinct values (1 for the least) in slice_cmp's order. */
static bool distinct_rank(distinct *d)
{
    const bd_slice **by = malloc(d->n * sizeof *by + 1);
    if (!by)
        return false;
    for (size_t i = 0; i < d->n; i++)
        by[i] = &d->value[i];
    qsort(by, d->n, sizeof *by, value_cmp);
    for (size_t i = 0; i < d->n; i++)
        d->rank[by[i] - d->value] = (uint32_t)(i + 1);
    free(by);
    return true;
}

static bool order_by_ranks(stage_batch *b)
{
    distinct dom = {0}, br = {0};
    sort_entry *e = malloc(b->n * sizeof *e + 1);
    bool ok = e && distinct_init(&dom, b->n) && distinct_init(&br, b->n);
    for (size_t i = 0; ok && i < b->n; i++) {
        const staged *row = &b->rows[i];
        if (row->rejected)
            continue;
        const char *uuid = row->u.record.breach_uuid;
        dom.of_row[i] = distinct_add(&dom, row->u.record.email_domain);
        br.of_row[i] = distinct_add(&br, (bd_slice){uuid, strlen(uuid)});
    }
    ok = ok && distinct_rank(&dom) && distinct_rank(&br);
    for (size_t i = 0; ok && i < b->n; i++) {
        const staged *row = &b->rows[i];
        e[i].row = row;
        e[i].rank =
            row->rejected ? 0 : (uint64_t)dom.rank[dom.of_row[i]] << 32 | br.rank[br.of_row[i]];
    }
    if (ok) {
        qsort(e, b->n, sizeof *e, entry_cmp);
        for (size_t i = 0; i < b->n; i++)
            b->order[i] = e[i].row;
    }
    free(e);
    distinct_free(&dom);
    distinct_free(&br);
    return ok;
}

void bd_import_order_window(stage_batch *b)
{
    if (order_by_ranks(b))
        return;
    /* out of memory for the ranks: the file's order, which only spreads domains' pages */
    for (size_t i = 0; i < b->n; i++)
        b->order[i] = &b->rows[i];
}
