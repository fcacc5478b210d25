/* The watch matcher's indexes (watch_index.h): two tables of linear probing over entry
 * numbers plus one (0: empty), kept at most half full. */
#include "ingest/watch_index.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int type;
    const char *key;
    size_t len;
    uint64_t hash;
    int first, last; /* watches, linked by next[] */
} group;

typedef struct {
    int g;
    int64_t breach_id;
} slot;

struct bd_watch_index {
    group *g;
    int ng, capg;
    int *gtab;
    size_t gsize; /* a power of two */
    int *next;    /* by watch: the next of its group, -1 none */
    int nw, capw;
    slot *s;
    int ns, caps;
    int *stab;
    size_t ssize; /* a power of two */
};

#define FIRST_TABLE 64

static uint64_t mix(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    return h ^ (h >> 33);
}

static uint64_t hash_value(int type, const char *key, size_t len)
{
    uint64_t h = 1469598103934665603ull ^ (uint64_t)(unsigned)type;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (uint8_t)key[i]) * 1099511628211ull;
    return mix(h);
}

static uint64_t hash_slot(int g, int64_t breach_id)
{
    return mix((uint64_t)(unsigned)g * 0x9e3779b97f4a7c15ull ^ (uint64_t)breach_id);
}

/* arr, of *cap elements of el bytes, with room for element n: arr itself or a larger copy
 * (*cap updated); NULL when out of memory (arr stays as it was). */
static void *room_for(void *arr, int *cap, int n, size_t el)
{
    if (n < *cap)
        return arr;
    int c = *cap ? 2 * *cap : 64;
    void *a = realloc(arr, (size_t)c * el);
    if (a)
        *cap = c;
    return a;
}

bd_watch_index *bd_watch_index_new(void)
{
    bd_watch_index *ix = calloc(1, sizeof *ix);
    if (!ix)
        return NULL;
    ix->gtab = calloc(FIRST_TABLE, sizeof *ix->gtab);
    ix->stab = calloc(FIRST_TABLE, sizeof *ix->stab);
    if (!ix->gtab || !ix->stab) {
        bd_watch_index_free(ix);
        return NULL;
    }
    ix->gsize = ix->ssize = FIRST_TABLE;
    return ix;
}

void bd_watch_index_free(bd_watch_index *ix)
{
    if (!ix)
        return;
    free(ix->g);
    free(ix->gtab);
    free(ix->next);
    free(ix->s);
    free(ix->stab);
    free(ix);
}

/* Doubles the table *tab of n entries, entry i placed by hash_of(ctx, i); false when out of
 * memory (the old table stays). */
static bool grow_table(int **tab, size_t *size, int n, uint64_t (*hash_of)(const void *, int),
                       const void *ctx)
{
    size_t sz = 2 * *size;
    int *t = calloc(sz, sizeof *t);
    if (!t)
        return false;
    for (int i = 0; i < n; i++) {
        size_t at = hash_of(ctx, i) & (sz - 1);
        while (t[at])
            at = (at + 1) & (sz - 1);
        t[at] = i + 1;
    }
    free(*tab);
    *tab = t;
    *size = sz;
    return true;
}

static uint64_t group_hash(const void *ctx, int i)
{
    return ((const bd_watch_index *)ctx)->g[i].hash;
}

static uint64_t slot_hash(const void *ctx, int i)
{
    const slot *s = &((const bd_watch_index *)ctx)->s[i];
    return hash_slot(s->g, s->breach_id);
}

/* The table position of (type, key) with its hash h: an empty one when it is absent. */
static size_t group_at(const bd_watch_index *ix, int type, const char *key, size_t len,
                       uint64_t h)
{
    size_t at = h & (ix->gsize - 1);
    for (int e; (e = ix->gtab[at]) != 0; at = (at + 1) & (ix->gsize - 1)) {
        const group *g = &ix->g[e - 1];
        if (g->hash == h && g->type == type && g->len == len && memcmp(g->key, key, len) == 0)
            break;
    }
    return at;
}

int bd_watch_index_add(bd_watch_index *ix, int type, const char *key, size_t len)
{
    int *next = room_for(ix->next, &ix->capw, ix->nw, sizeof *next);
    if (!next)
        return -1;
    ix->next = next;
    uint64_t h = hash_value(type, key, len);
    size_t at = group_at(ix, type, key, len, h);
    int g = ix->gtab[at] - 1;
    if (g < 0) {
        if ((size_t)(ix->ng + 1) * 2 > ix->gsize) {
            if (!grow_table(&ix->gtab, &ix->gsize, ix->ng, group_hash, ix))
                return -1;
            at = group_at(ix, type, key, len, h);
        }
        group *gs = room_for(ix->g, &ix->capg, ix->ng, sizeof *gs);
        if (!gs)
            return -1;
        ix->g = gs;
        g = ix->ng++;
        ix->g[g] = (group){.type = type, .key = key, .len = len, .hash = h, .first = -1,
                           .last = -1};
        ix->gtab[at] = g + 1;
    }
    int w = ix->nw++;
    ix->next[w] = -1;
    if (ix->g[g].last >= 0)
        ix->next[ix->g[g].last] = w;
    else
        ix->g[g].first = w;
    ix->g[g].last = w;
    return g;
}

int bd_watch_index_find(const bd_watch_index *ix, int type, const char *key, size_t len)
{
    return ix->gtab[group_at(ix, type, key, len, hash_value(type, key, len))] - 1;
}

int bd_watch_index_groups(const bd_watch_index *ix)
{
    return ix->ng;
}

int bd_watch_index_first(const bd_watch_index *ix, int g)
{
    return g >= 0 && g < ix->ng ? ix->g[g].first : -1;
}

int bd_watch_index_next(const bd_watch_index *ix, int w)
{
    return w >= 0 && w < ix->nw ? ix->next[w] : -1;
}

static size_t slot_at(const bd_watch_index *ix, int g, int64_t breach_id)
{
    size_t at = hash_slot(g, breach_id) & (ix->ssize - 1);
    for (int e; (e = ix->stab[at]) != 0; at = (at + 1) & (ix->ssize - 1))
        if (ix->s[e - 1].g == g && ix->s[e - 1].breach_id == breach_id)
            break;
    return at;
}

int bd_watch_index_slot(bd_watch_index *ix, int g, int64_t breach_id)
{
    size_t at = slot_at(ix, g, breach_id);
    if (ix->stab[at])
        return ix->stab[at] - 1;
    if ((size_t)(ix->ns + 1) * 2 > ix->ssize) {
        if (!grow_table(&ix->stab, &ix->ssize, ix->ns, slot_hash, ix))
            return -1;
        at = slot_at(ix, g, breach_id);
    }
    slot *ss = room_for(ix->s, &ix->caps, ix->ns, sizeof *ss);
    if (!ss)
        return -1;
    ix->s = ss;
    ix->s[ix->ns] = (slot){.g = g, .breach_id = breach_id};
    ix->stab[at] = ++ix->ns;
    return ix->ns - 1;
}

int bd_watch_index_slots(const bd_watch_index *ix)
{
    return ix->ns;
}

void bd_watch_index_slot_of(const bd_watch_index *ix, int i, int *g, int64_t *breach_id)
{
    *g = ix->s[i].g;
    *breach_id = ix->s[i].breach_id;
}

void bd_watch_index_clear_slots(bd_watch_index *ix)
{
    if (ix->ns == 0)
        return;
    memset(ix->stab, 0, ix->ssize * sizeof *ix->stab);
    ix->ns = 0;
}
