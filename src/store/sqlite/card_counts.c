/* card_counts' increments of the open write transaction (BINs, reversed last fours, owner
 * words per expiry: schema.c), added up in memory and written when it commits, one upsert
 * per distinct key in key order. A put per card moved each of its counts with an upsert of
 * its own: 2 per card, then 2 more per owner word with the owner-word counts (a plain
 * import of 300k cards 8.1 -> 9.8 s); a batch of 50,000 cards holds a few hundred BINs, at
 * most 10,000 tails and some tens of thousands of owner words with an expiry. */
#include <stdlib.h>
#include <string.h>

#include "store/sqlite/sqlite_impl.h"
#include "store/sqlite/statements.h"

/* Past this many distinct keys the increments are written at once, inside the
 * transaction, so that the table stays small whatever the batch. */
#define MAX_KEYS (1u << 18)

static uint64_t key_hash(int kind, const char *a, size_t alen, const char *b, size_t blen)
{
    uint64_t h = 1469598103934665603u ^ (uint64_t)kind;
    for (size_t i = 0; i < alen; i++)
        h = (h ^ (unsigned char)a[i]) * 1099511628211u;
    if (b) {
        h = (h ^ ' ') * 1099511628211u;
        for (size_t i = 0; i < blen; i++)
            h = (h ^ (unsigned char)b[i]) * 1099511628211u;
    }
    return h;
}

static const char *key_of(const sq_card_tally *t, const sq_card_count *e)
{
    return t->keys.data + e->off;
}

static bool same_key(const sq_card_tally *t, const sq_card_count *e, int kind, const char *a,
                     size_t alen, const char *b, size_t blen)
{
    size_t len = alen + (b ? 1 + blen : 0);
    if (e->kind != kind || e->len != len)
        return false;
    const char *k = key_of(t, e);
    return memcmp(k, a, alen) == 0 && (!b || (k[alen] == ' ' && memcmp(k + alen + 1, b, blen) == 0));
}

/* Doubles the slots (or makes the first 1,024), placing every entry again. */
static bd_result grow(sq_card_tally *t)
{
    size_t cap = t->cap ? t->cap * 2 : 1024;
    sq_card_count *slot = calloc(cap, sizeof *slot);
    if (!slot)
        return BD_ERR_NOMEM;
    for (size_t i = 0; i < t->cap; i++) {
        if (!t->slot[i].len)
            continue;
        size_t j = t->slot[i].hash & (cap - 1);
        while (slot[j].len)
            j = (j + 1) & (cap - 1);
        slot[j] = t->slot[i];
    }
    free(t->slot);
    t->slot = slot;
    t->cap = cap;
    return BD_OK;
}

bd_result sq_card_count_add(sqlite_store *s, int kind, const char *a, size_t alen,
                            const char *b, size_t blen)
{
    sq_card_tally *t = &s->card_tally;
    if (alen == 0)
        return BD_OK;
    if (t->used >= MAX_KEYS) {
        bd_result r = sq_card_counts_flush(s);
        if (r != BD_OK)
            return r;
    }
    if ((t->used + 1) * 2 > t->cap) {
        bd_result r = grow(t);
        if (r != BD_OK)
            return r;
    }
    uint64_t h = key_hash(kind, a, alen, b, blen);
    size_t j = h & (t->cap - 1);
    for (; t->slot[j].len; j = (j + 1) & (t->cap - 1))
        if (t->slot[j].hash == h && same_key(t, &t->slot[j], kind, a, alen, b, blen)) {
            t->slot[j].n++;
            return BD_OK;
        }
    size_t off = t->keys.len;
    bd_result r = bd_buf_append(&t->keys, a, alen);
    if (r == BD_OK && b)
        r = bd_buf_append_char(&t->keys, ' ');
    if (r == BD_OK && b)
        r = bd_buf_append(&t->keys, b, blen);
    if (r != BD_OK)
        return r;
    t->slot[j] = (sq_card_count){.hash = h, .off = off, .len = t->keys.len - off,
                                  .kind = kind, .n = 1};
    t->used++;
    return BD_OK;
}

/* Key order, so that the upserts walk card_counts' key from one end to the other. */
static int by_key(const void *x, const void *y)
{
    const sq_card_count *a = x, *b = y;
    if (a->kind != b->kind)
        return a->kind < b->kind ? -1 : 1;
    size_t n = a->len < b->len ? a->len : b->len;
    int c = memcmp(a->at, b->at, n);
    return c ? c : (a->len > b->len) - (a->len < b->len);
}

bd_result sq_card_counts_flush(sqlite_store *s)
{
    sq_card_tally *t = &s->card_tally;
    if (!t->used)
        return BD_OK;
    /* the entries packed at the front, then sorted (the slots are rebuilt on next use) */
    size_t n = 0;
    for (size_t i = 0; i < t->cap; i++)
        if (t->slot[i].len) {
            t->slot[n] = t->slot[i];
            t->slot[n].at = key_of(t, &t->slot[i]); /* the keys stay put while flushing */
            n++;
        }
    qsort(t->slot, n, sizeof *t->slot, by_key);
    bd_result r = BD_OK;
    for (size_t i = 0; i < n && r == BD_OK; i++) {
        sqlite3_stmt *st = sq_fixed(s, Q_CARD_COUNT_ADD);
        if (!st) {
            r = BD_ERR_STORE;
            break;
        }
        sqlite3_bind_int(st, 1, t->slot[i].kind);
        sqlite3_bind_text(st, 2, t->slot[i].at, (int)t->slot[i].len, SQLITE_STATIC);
        sqlite3_bind_int64(st, 3, t->slot[i].n);
        r = sq_step_done(s, st);
    }
    sq_card_counts_forget(s);
    return r;
}

void sq_card_counts_forget(sqlite_store *s)
{
    sq_card_tally *t = &s->card_tally;
    if (t->cap)
        memset(t->slot, 0, t->cap * sizeof *t->slot);
    t->used = 0;
    bd_buf_reset(&t->keys);
}

void sq_card_counts_free(sqlite_store *s)
{
    sq_card_tally *t = &s->card_tally;
    free(t->slot);
    t->slot = NULL;
    t->cap = t->used = 0;
    bd_buf_free(&t->keys);
}
