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
#include <stdlib.h>
#include <string.h>

#include "ingest/import_impl.h"

static int slice_cmp(bd_slice a, bd_slice b)
{
    size_t n = a.len < b.len ? a.len : b.len;
    int c = n ? memcmp(a.ptr, b.ptr, n) : 0;
    return c ? c : (a.len > b.len) - (a.len < b.len);
}

/* Compares two entries of a window's order (pointers into its rows): the rows' own array is
 * in line order, so equal keys compare by address. */
static int key_cmp(const void *pa, const void *pb)
{
    const staged *a = *(const staged *const *)pa, *b = *(const staged *const *)pb;
    if (a->rejected != b->rejected)
        return a->rejected ? -1 : 1;
    if (!a->rejected) {
        const bd_record_in *x = &a->u.record, *y = &b->u.record;
        int c = slice_cmp(x->email_domain, y->email_domain);
        if (!c)
            c = strcmp(x->breach_uuid, y->breach_uuid);
        if (!c)
            c = slice_cmp(x->email, y->email);
        if (c)
            return c;
    }
    return (a > b) - (a < b);
}

void bd_import_order_window(stage_batch *b)
{
    for (size_t i = 0; i < b->n; i++)
        b->order[i] = &b->rows[i];
    qsort(b->order, b->n, sizeof *b->order, key_cmp);
}
