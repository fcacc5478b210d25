/* GCRA buckets in an open-addressing table of atomics. */
#include "auth/ratelimit.h"

#include <stdatomic.h>
#include <stdlib.h>

typedef struct {
    _Atomic uint64_t id; /* 0: free */
    _Atomic int64_t tat; /* theoretical arrival time, Unix microseconds */
} bucket;

struct bd_ratelimit {
    bucket *slots;
    uint32_t mask;
};

#define PROBES 32

bd_ratelimit *bd_ratelimit_new(uint32_t slots)
{
    uint32_t n = 64;
    while (n < slots && n < (1u << 30))
        n <<= 1;
    bd_ratelimit *rl = malloc(sizeof *rl);
    if (!rl)
        return NULL;
    rl->slots = calloc(n, sizeof *rl->slots);
    if (!rl->slots) {
        free(rl);
        return NULL;
    }
    rl->mask = n - 1;
    return rl;
}

void bd_ratelimit_free(bd_ratelimit *rl)
{
    if (!rl)
        return;
    free(rl->slots);
    free(rl);
}

/* The bucket of id: found, claimed when free, or, when the probe window is full, the one
 * that has been idle longest (its state is reset: an idle bucket is full anyway unless it
 * was drained within the last period). */
static bucket *find(bd_ratelimit *rl, uint64_t id)
{
    uint32_t h = (uint32_t)bd_ratelimit_mix(id);
    bucket *oldest = NULL;
    for (uint32_t i = 0; i < PROBES; i++) {
        bucket *b = &rl->slots[(h + i) & rl->mask];
        uint64_t cur = atomic_load_explicit(&b->id, memory_order_acquire);
        if (cur == id)
            return b;
        if (cur == 0) {
            uint64_t expected = 0;
            if (atomic_compare_exchange_strong(&b->id, &expected, id))
                return b;
            if (expected == id)
                return b;
            continue;
        }
        if (!oldest || atomic_load(&b->tat) < atomic_load(&oldest->tat))
            oldest = b;
    }
    atomic_store(&oldest->tat, 0);
    atomic_store(&oldest->id, id);
    return oldest;
}

/* The bucket of id when it has one; NULL otherwise. */
static bucket *find_existing(bd_ratelimit *rl, uint64_t id)
{
    uint32_t h = (uint32_t)bd_ratelimit_mix(id);
    for (uint32_t i = 0; i < PROBES; i++) {
        bucket *b = &rl->slots[(h + i) & rl->mask];
        uint64_t cur = atomic_load_explicit(&b->id, memory_order_acquire);
        if (cur == id)
            return b;
        if (cur == 0)
            return NULL;
    }
    return NULL;
}

void bd_rate_shape(int64_t *limit, int64_t period_s, int64_t *share_us, int64_t *depth_us)
{
    if (*limit < 1)
        *limit = 1;
    int64_t t = period_s * 1000000 / *limit;
    if (t < 1)
        t = 1;
    *share_us = t;
    *depth_us = t * *limit;
}

void bd_rate_refused(int64_t tat, int64_t share, int64_t depth, int64_t limit, int64_t now_us,
                     bd_rate_decision *d)
{
    int64_t current = tat > now_us ? tat : now_us;
    d->allowed = false;
    d->limit = limit;
    d->remaining = 0;
    d->reset = (current + 999999) / 1000000;
    int64_t wait = current + share - depth - now_us; /* until one share has drained */
    d->retry_after = wait > 0 ? (wait + 999999) / 1000000 : 1;
}

void bd_rate_admitted(int64_t tat, int64_t share, int64_t depth, int64_t limit, int64_t now_us,
                      bd_rate_decision *d)
{
    d->allowed = true;
    d->limit = limit;
    d->remaining = (depth - (tat - now_us)) / share;
    d->reset = (tat + 999999) / 1000000;
    d->retry_after = 0;
}

void bd_ratelimit_peek(bd_ratelimit *rl, uint64_t id, int64_t limit, int64_t period_s,
                       int64_t now_us, bd_rate_decision *d)
{
    int64_t depth, t;
    bd_rate_shape(&limit, period_s, &t, &depth);
    bucket *b = find_existing(rl, id);
    int64_t tat = b ? atomic_load_explicit(&b->tat, memory_order_relaxed) : 0;
    int64_t next = (tat > now_us ? tat : now_us) + t;
    if (next - now_us > depth)
        bd_rate_refused(tat, t, depth, limit, now_us, d);
    else
        bd_rate_admitted(next, t, depth, limit, now_us, d);
}

void bd_ratelimit_take_n(bd_ratelimit *rl, uint64_t id, int64_t limit, int64_t period_s,
                         int64_t now_us, int64_t n, bd_rate_decision *d)
{
    /* One request's share of the period; the bucket is `limit` shares deep. */
    int64_t depth, t;
    bd_rate_shape(&limit, period_s, &t, &depth);
    if (n < 1)
        n = 1;
    bucket *b = find(rl, id);
    int64_t tat = atomic_load_explicit(&b->tat, memory_order_relaxed), next;
    for (;;) {
        next = (tat > now_us ? tat : now_us) + (n > depth / t ? depth + 1 : n * t);
        if (next - now_us > depth)
            break; /* over budget: nothing to store */
        if (atomic_compare_exchange_weak_explicit(&b->tat, &tat, next, memory_order_acq_rel,
                                                  memory_order_relaxed)) {
            bd_rate_admitted(next, t, depth, limit, now_us, d);
            return;
        }
    }
    bd_rate_refused(tat, t, depth, limit, now_us, d);
    if (n > 1) { /* until n shares have drained, not one */
        int64_t current = tat > now_us ? tat : now_us;
        int64_t wait = current + (n > depth / t ? depth : n * t) - depth - now_us;
        d->retry_after = wait > 0 ? (wait + 999999) / 1000000 : 1;
    }
}

void bd_ratelimit_take(bd_ratelimit *rl, uint64_t id, int64_t limit, int64_t period_s,
                       int64_t now_us, bd_rate_decision *d)
{
    bd_ratelimit_take_n(rl, id, limit, period_s, now_us, 1, d);
}
