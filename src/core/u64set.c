#include "core/u64set.h"

#include <stdlib.h>
#include <string.h>

#include "core/zeroed.h"

void bd_u64set_init(bd_u64set *s, size_t max_keys)
{
    *s = (bd_u64set){.max_keys = max_keys};
}

void bd_u64set_free(bd_u64set *s)
{
    free(s->slot);
    bd_u64set_init(s, s->max_keys);
}

static size_t home(const bd_u64set *s, uint64_t key)
{
    return (size_t)(key ^ (key >> 29)) & (s->cap - 1);
}

static bool grow(bd_u64set *s)
{
    size_t cap = s->cap ? s->cap * 2 : 1024;
    /* written before use (core/zeroed.h), not calloc'd */
    uint64_t *slot = bd_zeroed_alloc(cap * sizeof *slot);
    if (!slot)
        return false;
    bd_u64set old = *s;
    s->slot = slot;
    s->cap = cap;
    for (size_t i = 0; i < old.cap; i++) {
        if (!old.slot[i])
            continue;
        size_t j = home(s, old.slot[i]);
        while (slot[j])
            j = (j + 1) & (cap - 1);
        slot[j] = old.slot[i];
    }
    free(old.slot);
    return true;
}

int bd_u64set_add(bd_u64set *s, uint64_t key)
{
    key = key ? key : 1;
    if (s->cap) {
        for (size_t i = home(s, key);; i = (i + 1) & (s->cap - 1)) {
            if (s->slot[i] == key)
                return 0;
            if (!s->slot[i])
                break;
        }
    }
    if (s->used >= s->max_keys)
        return -1;
    if ((s->used + 1) * 4 > s->cap * 3 && !grow(s))
        return -1;
    size_t i = home(s, key);
    while (s->slot[i])
        i = (i + 1) & (s->cap - 1);
    s->slot[i] = key;
    s->used++;
    return 1;
}

void bd_u64set_prefetch(const bd_u64set *s, uint64_t key)
{
    if (s->cap)
        __builtin_prefetch(&s->slot[home(s, key ? key : 1)]);
}
