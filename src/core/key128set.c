#include "core/key128set.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/zeroed.h"

void bd_key128set_init(bd_key128set *s, size_t max_keys)
{
    *s = (bd_key128set){.max_keys = max_keys};
}

void bd_key128set_free(bd_key128set *s)
{
    free(s->slot);
    bd_key128set_init(s, s->max_keys);
}

static size_t home(const bd_key128set *s, const uint64_t k[2])
{
    return (size_t)(k[0] ^ (k[0] >> 29)) & (s->cap - 1);
}

static bool empty(const uint64_t k[2])
{
    return (k[0] | k[1]) == 0;
}

static bool same(const uint64_t a[2], const uint64_t b[2])
{
    return a[0] == b[0] && a[1] == b[1];
}

static size_t free_slot(const bd_key128set *s, const uint64_t k[2])
{
    size_t i = home(s, k);
    while (!empty(s->slot[i]))
        i = (i + 1) & (s->cap - 1);
    return i;
}

static bool grow(bd_key128set *s)
{
    size_t cap = s->cap ? s->cap * 2 : 1024;
    /* written before use (core/zeroed.h): with calloc each first write into a page made
     * every CPU flush its TLB (8% of the writer's samples in a 1M-record --bulk load) */
    uint64_t(*slot)[2] = bd_zeroed_alloc(cap * sizeof *slot);
    if (!slot)
        return false;
    bd_key128set old = *s;
    s->slot = slot;
    s->cap = cap;
    for (size_t i = 0; i < old.cap; i++) {
        if (!empty(old.slot[i]))
            memcpy(s->slot[free_slot(s, old.slot[i])], old.slot[i], sizeof old.slot[i]);
    }
    free(old.slot);
    return true;
}

void bd_key128set_prefetch(const bd_key128set *s, const uint8_t key[16])
{
    uint64_t k[2];
    memcpy(k, key, sizeof k);
    if (s->cap)
        __builtin_prefetch(&s->slot[home(s, k)]);
}

int bd_key128set_add(bd_key128set *s, const uint8_t key[16])
{
    uint64_t k[2];
    memcpy(k, key, sizeof k);
    if (empty(k))
        k[1] = 1;
    if (s->cap) {
        for (size_t i = home(s, k);; i = (i + 1) & (s->cap - 1)) {
            if (same(s->slot[i], k))
                return 0;
            if (empty(s->slot[i]))
                break;
        }
    }
    if (s->used >= s->max_keys)
        return -1;
    if ((s->used + 1) * 4 > s->cap * 3 && !grow(s))
        return -1;
    memcpy(s->slot[free_slot(s, k)], k, sizeof k);
    s->used++;
    return 1;
}
