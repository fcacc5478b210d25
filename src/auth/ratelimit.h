/* Rate limiting by the generic cell rate algorithm (a token bucket refilled continuously):
 * a bucket holds `limit` requests and refills at `limit` per period, so there is no double
 * burst at a period boundary. State is one "theoretical arrival time" per bucket, updated
 * with a compare-and-swap, so concurrent threads never admit more than the budget and take
 * no lock. State lives in memory, never on the request's storage path.
 *
 * A bd_ratelimit is a fixed-size table of buckets keyed by a 64-bit id (an API key id, or a
 * hash of a client address). Ownership: the caller owns the table; it is safe to use from
 * any number of threads. */
#ifndef BD_AUTH_RATELIMIT_H
#define BD_AUTH_RATELIMIT_H

#include <stdbool.h>
#include <stdint.h>

typedef struct bd_ratelimit bd_ratelimit;

typedef struct {
    bool allowed;
    int64_t limit;       /* bucket size */
    int64_t remaining;   /* requests left right now, after this one */
    int64_t reset;       /* Unix seconds at which the bucket is full again */
    int64_t retry_after; /* seconds until the next request is admitted; 0 when allowed */
} bd_rate_decision;

/* Spreads 64-bit ids over a table's slots (the finaliser of MurmurHash3): this file's
 * buckets and auth/limiter.c's leases. */
static inline uint64_t bd_ratelimit_mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    return x ^ (x >> 33);
}

/* A table for up to `slots` distinct ids (rounded up to a power of two); NULL when out of
 * memory. When every slot is taken, the least recently active bucket is reused. */
bd_ratelimit *bd_ratelimit_new(uint32_t slots);
void bd_ratelimit_free(bd_ratelimit *rl);

/* Takes one request from id's bucket of `limit` per `period_s` seconds at time now_us
 * (Unix microseconds). id 0 is reserved. */
void bd_ratelimit_take(bd_ratelimit *rl, uint64_t id, int64_t limit, int64_t period_s,
                       int64_t now_us, bd_rate_decision *d);
/* Takes n (>= 1) requests at once, all or none: refused when the bucket does not hold them
 * all (retry_after: until it does; n past the bucket's size is never admitted). */
void bd_ratelimit_take_n(bd_ratelimit *rl, uint64_t id, int64_t limit, int64_t period_s,
                         int64_t now_us, int64_t n, bd_rate_decision *d);
/* What take would decide now, without taking anything (an id never seen is allowed). */
void bd_ratelimit_peek(bd_ratelimit *rl, uint64_t id, int64_t limit, int64_t period_s,
                       int64_t now_us, bd_rate_decision *d);

/* The arithmetic of a bucket, for keepers of bucket state elsewhere (auth/limiter.c): the
 * shape of `limit` requests per period_s (one request's share of the period and the bucket's
 * depth, both in microseconds; limit is raised to 1 when below), and the decision for a
 * bucket whose theoretical arrival time is now tat: admitted (tat already includes this
 * request) or refused. */
void bd_rate_shape(int64_t *limit, int64_t period_s, int64_t *share_us, int64_t *depth_us);
void bd_rate_admitted(int64_t tat, int64_t share, int64_t depth, int64_t limit, int64_t now_us,
                      bd_rate_decision *d);
void bd_rate_refused(int64_t tat, int64_t share, int64_t depth, int64_t limit, int64_t now_us,
                     bd_rate_decision *d);

#endif
