/* Budgets per process, or leased in batches from buckets a store shares (see limiter.h). */
#include "auth/limiter.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/pool.h"
#include "core/log.h"
#include "store/store.h"
#include "store/uri.h"

#define KINDS 3            /* bd_budget_kind values are 1 and 2 */
#define LEASE_SLOTS 4096   /* buckets with a lease at once; a power of two */
#define LEASE_PROBES 16
#define LEASE_MAX 64       /* requests in one lease at most ... */
#define LEASE_DIVISOR 64   /* ... and 1/64 of what the bucket holds after it */
#define LEASE_US 1000000   /* unused requests go back after this long */

/* One bucket's lease, under its own lock (held across the round trip that renews it, so the
 * threads of one key queue behind one lease rather than each taking their own). */
typedef struct {
    pthread_mutex_t lock;
    int kind; /* 0: free */
    int64_t id;
    int64_t left;       /* leased requests not handed out yet */
    int64_t expires_us; /* when they go back */
    int64_t share_us;   /* the bucket's shape at the lease */
    int64_t tat_us;     /* the bucket's arrival time after the lease */
    int64_t remaining;  /* what the bucket held after the lease */
    int64_t want;       /* the next lease's size */
    int64_t used_us;    /* last request served, for eviction */
} lease;

struct bd_limiter {
    bd_ratelimit *local[KINDS]; /* per-process budgets: the only ones, or the fallback */
    char *uri;                  /* NULL: per process */
    char shown[512];            /* uri without its password */
    bd_store_pool *conns;       /* each thread's connection to the store (store/pool.h) */
    bool owns_conns;            /* made by bd_limiter_new, freed with the limiter */
    lease *leases;
    _Atomic bool reachable;
    _Atomic uint64_t errors, leases_taken;
};

static void log_down(bd_limiter *l, const char *why)
{
    atomic_fetch_add_explicit(&l->errors, 1, memory_order_relaxed);
    if (atomic_exchange(&l->reachable, false))
        bd_log(BD_LOG_WARN, "auth",
               "shared limits at %s unreachable (%s); budgets are kept per process until it "
               "answers again",
               l->shown, why);
}

/* The calling thread's connection to the shared store, opened on first use; NULL when it
 * cannot be opened (logged, and the limiter is marked unreachable). */
static bd_store *thread_store(bd_limiter *l)
{
    bd_store *s;
    char why[512];
    bd_result r = bd_store_pool_get(l->conns, &s, why, sizeof why);
    if (r == BD_ERR_NOMEM)
        return NULL;
    if (r != BD_OK) {
        log_down(l, why);
        return NULL;
    }
    return s;
}

/* Opens the store once and takes a request from a bucket no key has (key ids start at 1):
 * a store that cannot keep buckets, or will not write them (a read-only standby), fails at
 * start, not at the first request. */
static bd_result check_store(bd_limiter *l, char *why, size_t whylen)
{
    bd_store *s;
    bd_result r = bd_store_open(l->uri, BD_STORE_WRITE, &s, why, whylen);
    if (r != BD_OK)
        return r;
    bd_store_caps caps;
    bd_store_capabilities(s, &caps);
    int64_t granted, tat;
    r = caps.shared_rate_counters
            ? bd_store_rate_take(s, BD_BUDGET_REQUESTS, 0, 0, 1, 1, 1, &granted, &tat)
            : BD_ERR_INVALID;
    bd_store_close(s);
    if (!caps.shared_rate_counters)
        snprintf(why, whylen,
                 "--shared-limits: the store at %s cannot keep shared rate limits; name a "
                 "PostgreSQL store (its primary)",
                 l->shown);
    else if (r != BD_OK)
        snprintf(why, whylen,
                 "--shared-limits: the store at %s did not take a write; name the primary, "
                 "not a standby",
                 l->shown);
    return r;
}

bd_result bd_limiter_new(const char *shared_uri, bd_limiter **out, char *why, size_t whylen)
{
    *out = NULL;
    bd_store_pool *pool = NULL;
    if (shared_uri && !(pool = bd_store_pool_new(shared_uri, BD_STORE_WRITE)))
        return BD_ERR_NOMEM;
    bd_result r = bd_limiter_new_pooled(pool, out, why, whylen);
    if (r == BD_OK)
        (*out)->owns_conns = pool != NULL;
    else
        bd_store_pool_free(pool);
    return r;
}

bd_result bd_limiter_new_pooled(bd_store_pool *shared, bd_limiter **out, char *why, size_t whylen)
{
    *out = NULL;
    bd_limiter *l = calloc(1, sizeof *l);
    if (!l)
        return BD_ERR_NOMEM;
    bool ok = true;
    for (int k = 1; k < KINDS; k++)
        ok = ok && (l->local[k] = bd_ratelimit_new(1u << 16)) != NULL;
    if (ok && shared) {
        l->uri = strdup(bd_store_pool_uri(shared));
        l->conns = shared;
        l->leases = calloc(LEASE_SLOTS, sizeof *l->leases);
        ok = l->uri && l->conns && l->leases;
        for (int i = 0; ok && i < LEASE_SLOTS; i++)
            pthread_mutex_init(&l->leases[i].lock, NULL);
    }
    if (!ok) {
        bd_limiter_free(l);
        return BD_ERR_NOMEM;
    }
    atomic_store(&l->reachable, true);
    if (l->uri) {
        bd_uri_redact(l->uri, l->shown, sizeof l->shown);
        bd_result r = check_store(l, why, whylen);
        if (r != BD_OK) {
            bd_limiter_free(l);
            return r;
        }
    }
    *out = l;
    return BD_OK;
}

void bd_limiter_free(bd_limiter *l)
{
    if (!l)
        return;
    if (l->owns_conns)
        bd_store_pool_free(l->conns);
    if (l->leases) {
        for (int i = 0; i < LEASE_SLOTS; i++)
            pthread_mutex_destroy(&l->leases[i].lock);
        free(l->leases);
    }
    for (int k = 1; k < KINDS; k++)
        bd_ratelimit_free(l->local[k]);
    free(l->uri);
    free(l);
}

/* Gives back what a lease has left; false when the store did not answer (the requests are
 * then lost to the bucket until its arrival time drains: never more admitted, only fewer). */
static bool give_back(bd_limiter *l, bd_store *s, lease *ls)
{
    if (ls->left <= 0)
        return true;
    bd_result r = bd_store_rate_give_back(s, ls->kind, ls->id, ls->left, ls->share_us);
    ls->left = 0;
    if (r != BD_OK) {
        log_down(l, "giving back a lease failed");
        return false;
    }
    return true;
}

/* The lease of (kind, id), locked: found, a free slot claimed, or the least recently used
 * of the probe window handed over (its unused requests given back first). */
static lease *lease_of(bd_limiter *l, bd_store *s, int kind, int64_t id)
{
    uint64_t h = bd_ratelimit_mix((uint64_t)id * KINDS + (uint64_t)kind);
    lease *oldest = NULL;
    int64_t oldest_used = INT64_MAX;
    for (int i = 0; i < LEASE_PROBES; i++) {
        lease *ls = &l->leases[(h + (uint64_t)i) & (LEASE_SLOTS - 1)];
        pthread_mutex_lock(&ls->lock);
        if (ls->kind == kind && ls->id == id)
            return ls;
        if (ls->kind == 0) {
            ls->kind = kind;
            ls->id = id;
            ls->want = 1;
            return ls;
        }
        if (ls->used_us < oldest_used) {
            oldest = ls;
            oldest_used = ls->used_us;
        }
        pthread_mutex_unlock(&ls->lock);
    }
    pthread_mutex_lock(&oldest->lock);
    give_back(l, s, oldest);
    memset((char *)oldest + offsetof(lease, kind), 0, sizeof *oldest - offsetof(lease, kind));
    oldest->kind = kind;
    oldest->id = id;
    oldest->want = 1;
    return oldest;
}

/* Serves a request from the bucket's lease, renewing it when spent, expired or of another
 * shape (the key's budget changed). false when the store did not answer: nothing was
 * decided. */
static bool take_shared(bd_limiter *l, bd_store *s, int kind, int64_t id, int64_t limit,
                        int64_t share, int64_t depth, int64_t now, bd_rate_decision *d)
{
    lease *ls = lease_of(l, s, kind, id);
    ls->used_us = now;
    if (ls->left > 0 && ls->expires_us > now && ls->share_us == share) {
        ls->left--;
        d->allowed = true;
        d->limit = limit;
        d->remaining = ls->remaining + ls->left;
        d->reset = (ls->tat_us + 999999) / 1000000;
        d->retry_after = 0;
        pthread_mutex_unlock(&ls->lock);
        return true;
    }
    int64_t granted, tat;
    bool answered = give_back(l, s, ls) && bd_store_rate_take(s, kind, id, now, share, depth,
                                                              ls->want, &granted,
                                                              &tat) == BD_OK;
    if (!answered) {
        pthread_mutex_unlock(&ls->lock);
        log_down(l, "a lease of requests failed");
        return false;
    }
    atomic_fetch_add_explicit(&l->leases_taken, 1, memory_order_relaxed);
    int64_t remaining = (depth - (tat - now)) / share;
    if (remaining < 0)
        remaining = 0;
    ls->want = remaining / LEASE_DIVISOR;
    ls->want = ls->want < 1 ? 1 : ls->want > LEASE_MAX ? LEASE_MAX : ls->want;
    if (granted <= 0) {
        pthread_mutex_unlock(&ls->lock);
        bd_rate_refused(tat, share, depth, limit, now, d);
        return true;
    }
    ls->left = granted - 1;
    ls->expires_us = now + LEASE_US;
    ls->share_us = share;
    ls->tat_us = tat;
    ls->remaining = remaining;
    bd_rate_admitted(tat, share, depth, limit, now, d);
    d->remaining = remaining + ls->left;
    pthread_mutex_unlock(&ls->lock);
    return true;
}

void bd_limiter_take(bd_limiter *l, bd_budget_kind kind, int64_t id, int64_t limit,
                     int64_t period_s, int64_t now_us, bd_rate_decision *d)
{
    int k = kind == BD_BUDGET_EXACT ? BD_BUDGET_EXACT : BD_BUDGET_REQUESTS;
    if (l->uri && atomic_load_explicit(&l->reachable, memory_order_relaxed)) {
        int64_t share, depth;
        bd_rate_shape(&limit, period_s, &share, &depth);
        bd_store *s = thread_store(l);
        if (s && take_shared(l, s, k, id, limit, share, depth, now_us, d))
            return;
    }
    bd_ratelimit_take(l->local[k], (uint64_t)id, limit, period_s, now_us, d);
}

void bd_limiter_take_many(bd_limiter *l, bd_budget_kind kind, int64_t id, int64_t limit,
                          int64_t period_s, int64_t now_us, int64_t n, bd_rate_decision *d)
{
    int k = kind == BD_BUDGET_EXACT ? BD_BUDGET_EXACT : BD_BUDGET_REQUESTS;
    if (n <= 1) {
        bd_limiter_take(l, kind, id, limit, period_s, now_us, d);
        return;
    }
    if (l->uri && atomic_load_explicit(&l->reachable, memory_order_relaxed)) {
        int64_t share, depth, granted, tat;
        bd_rate_shape(&limit, period_s, &share, &depth);
        bd_store *s = thread_store(l);
        if (s && bd_store_rate_take(s, k, id, now_us, share, depth, n, &granted, &tat) == BD_OK) {
            atomic_fetch_add_explicit(&l->leases_taken, 1, memory_order_relaxed);
            if (granted == n) {
                bd_rate_admitted(tat, share, depth, limit, now_us, d);
                return;
            }
            if (granted > 0 && bd_store_rate_give_back(s, k, id, granted, share) != BD_OK)
                log_down(l, "giving back a lease failed");
            else
                tat -= granted * share;
            bd_rate_refused(tat, share, depth, limit, now_us, d);
            int64_t current = tat > now_us ? tat : now_us;
            int64_t wait = current + (n < limit ? n : limit) * share - depth - now_us;
            d->retry_after = wait > 0 ? (wait + 999999) / 1000000 : 1;
            return;
        }
        if (s)
            log_down(l, "a lease of requests failed");
    }
    bd_ratelimit_take_n(l->local[k], (uint64_t)id, limit, period_s, now_us, n, d);
}

void bd_limiter_tick(bd_limiter *l, int64_t now_us)
{
    if (!l->uri)
        return;
    bd_store *s = thread_store(l);
    if (!s)
        return;
    if (!atomic_load(&l->reachable)) {
        if (bd_store_ping(s) != BD_OK)
            return;
        atomic_store(&l->reachable, true);
        bd_log(BD_LOG_INFO, "auth", "shared limits at %s answer again", l->shown);
    }
    for (int i = 0; i < LEASE_SLOTS; i++) {
        lease *ls = &l->leases[i];
        if (pthread_mutex_trylock(&ls->lock) != 0)
            continue; /* in use: its owner renews it */
        bool ok = ls->left <= 0 || ls->expires_us > now_us || give_back(l, s, ls);
        pthread_mutex_unlock(&ls->lock);
        if (!ok)
            return;
    }
}

void bd_limiter_health_get(const bd_limiter *l, bd_limiter_health *h)
{
    h->shared = l->uri != NULL;
    h->reachable = h->shared && atomic_load(&l->reachable);
    h->errors = atomic_load_explicit(&l->errors, memory_order_relaxed);
    h->leases = atomic_load_explicit(&l->leases_taken, memory_order_relaxed);
}
