/* A bulk record load's records per breach (pg_impl.h): what it put into each, less what its
 * end removed as duplicates, so that the change log and the import's settling of the
 * breaches' counts know what the table would tell them without reading the load's records
 * again (two grouped scans of 1M records: 0.17 and 0.1 s). An open-addressed table of
 * breach ids, as many slots as twice the breaches or more. */
#include <stdlib.h>
#include <string.h>

#include "store/pg/pg_impl.h"

void pg_load_counts_begin(pg_store *p, int64_t after)
{
    pg_load_counts *c = &p->load_counts;
    pg_load_counts_forget(p);
    c->known = true;
    c->after = after;
}

void pg_load_counts_forget(pg_store *p)
{
    pg_load_counts *c = &p->load_counts;
    if (c->used)
        memset(c->slot, 0, c->cap * sizeof *c->slot);
    c->used = 0;
    c->known = false;
}

void pg_load_counts_free(pg_store *p)
{
    free(p->load_counts.slot);
    memset(&p->load_counts, 0, sizeof p->load_counts);
}

static size_t home(const pg_load_counts *c, int64_t id)
{
    return (size_t)(((uint64_t)id * 0x9E3779B97F4A7C15u) >> 32) & (c->cap - 1);
}

/* The slot of id, claimed when absent; NULL when the table cannot grow. */
static struct pg_load_count *slot_of(pg_load_counts *c, int64_t id)
{
    if ((c->used + 1) * 2 > c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 256;
        struct pg_load_count *slot = calloc(cap, sizeof *slot);
        if (!slot)
            return NULL;
        pg_load_counts old = *c;
        c->slot = slot;
        c->cap = cap;
        for (size_t i = 0; i < old.cap; i++) {
            if (!old.slot[i].breach_id)
                continue;
            size_t k = home(c, old.slot[i].breach_id);
            while (slot[k].breach_id)
                k = (k + 1) & (cap - 1);
            slot[k] = old.slot[i];
        }
        free(old.slot);
    }
    size_t k = home(c, id);
    while (c->slot[k].breach_id && c->slot[k].breach_id != id)
        k = (k + 1) & (c->cap - 1);
    if (!c->slot[k].breach_id) {
        c->slot[k].breach_id = id;
        c->used++;
    }
    return &c->slot[k];
}

void pg_load_counts_add(pg_store *p, int64_t breach_id, int64_t n)
{
    pg_load_counts *c = &p->load_counts;
    if (!c->known)
        return;
    struct pg_load_count *s = breach_id > 0 ? slot_of(c, breach_id) : NULL;
    if (s)
        s->n += n;
    else
        pg_load_counts_forget(p); /* the tables count instead */
}

bd_result pg_load_counts_arrays(pg_store *p, int64_t after, bd_buf *ids, bd_buf *ns, bool *known)
{
    const pg_load_counts *c = &p->load_counts;
    *known = c->known && c->after == after;
    if (!*known)
        return BD_OK;
    bd_result r = bd_buf_append_char(ids, '{');
    r = r == BD_OK ? bd_buf_append_char(ns, '{') : r;
    bool first = true;
    for (size_t i = 0; i < c->cap && r == BD_OK; i++) {
        if (!c->slot[i].breach_id || c->slot[i].n <= 0)
            continue;
        r = bd_buf_printf(ids, "%s%lld", first ? "" : ",", (long long)c->slot[i].breach_id);
        r = r == BD_OK ? bd_buf_printf(ns, "%s%lld", first ? "" : ",", (long long)c->slot[i].n) : r;
        first = false;
    }
    r = r == BD_OK ? bd_buf_append_char(ids, '}') : r;
    return r == BD_OK ? bd_buf_append_char(ns, '}') : r;
}
