/* Per-key usage counters: quotas counted in the store per request, the rest in batches (see
 * usage.h). */
#include "auth/usage.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "store/pool.h"
#include "core/log.h"
#include "store/store.h"
#include "store/uri.h"

#define PENDING_SLOTS 4096 /* (key, day) pairs counted in memory between flushes */
#define LEASE_SLOTS 1024   /* keys with a quota and a lease at once; a power of two */
#define LEASE_PROBES 16
#define LEASE_MAX 64     /* requests in one lease at most ... */
#define LEASE_DIVISOR 64 /* ... and 1/64 of what the quota leaves after it */
#define LEASE_US 1000000 /* unused requests go back after this long */

/* A quota key's lease: requests already counted in the store, handed out from memory. Under
 * its own lock, held across the round trip that renews it. */
typedef struct {
    pthread_mutex_t lock;
    int64_t key_id; /* 0: free */
    int32_t day;    /* the day the lease's requests were counted on */
    int64_t quota;  /* the quota it was taken under */
    int64_t left;   /* counted, not handed out yet */
    int64_t month;  /* the month's counter after the lease */
    int64_t expires_us;
    int64_t want; /* the next lease's size */
    int64_t used_us;
} lease;

typedef struct {
    int64_t key_id; /* 0: free */
    int32_t day;
    int64_t count;
} pending;

struct bd_usage {
    char *uri;
    char shown[512];        /* uri without its password */
    bd_store_pool *conns;   /* each thread's connection to the store (store/pool.h) */
    bool owns_conns;        /* made by bd_usage_new, freed with the counters */
    pthread_mutex_t lock;   /* the pending table */
    pending *table;         /* open addressing by key and day */
    size_t used;
    pending *batch; /* flush's copy of the table */
    lease *leases;
    _Atomic bool failing;   /* the last write failed (logged once) */
    _Atomic bool read_only; /* the store refused a quota's count as read-only (logged once) */
};

int32_t bd_usage_day(int64_t t)
{
    time_t tt = (time_t)t;
    struct tm tm;
    if (!gmtime_r(&tt, &tm))
        return 19700101;
    return (int32_t)((tm.tm_year + 1900) * 10000 + (tm.tm_mon + 1) * 100 + tm.tm_mday);
}

int64_t bd_usage_month_end(int64_t t)
{
    time_t tt = (time_t)t;
    struct tm tm;
    if (!gmtime_r(&tt, &tm))
        return 0;
    int y = tm.tm_year + 1900, m = tm.tm_mon + 2; /* next month, 1-based */
    if (m == 13) {
        y++;
        m = 1;
    }
    /* days since 1970-01-01 of y-m-01 (proleptic Gregorian) */
    int yy = y - (m <= 2);
    int64_t era = (yy >= 0 ? yy : yy - 399) / 400;
    int64_t yoe = yy - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return (era * 146097 + doe - 719468) * 86400;
}

bd_usage *bd_usage_new(const char *uri)
{
    bd_store_pool *pool = bd_store_pool_new(uri, BD_STORE_WRITE | BD_STORE_SMALL_WRITES);
    bd_usage *u = pool ? bd_usage_new_pooled(pool) : NULL;
    if (u)
        u->owns_conns = true;
    else
        bd_store_pool_free(pool);
    return u;
}

bd_usage *bd_usage_new_pooled(bd_store_pool *pool)
{
    bd_usage *u = calloc(1, sizeof *u);
    if (!u)
        return NULL;
    u->uri = strdup(bd_store_pool_uri(pool));
    u->table = calloc(PENDING_SLOTS, sizeof *u->table);
    u->batch = calloc(PENDING_SLOTS, sizeof *u->batch);
    u->leases = calloc(LEASE_SLOTS, sizeof *u->leases);
    u->conns = pool;
    if (!u->uri || !u->table || !u->batch || !u->leases) {
        free(u->leases);
        free(u->uri);
        free(u->table);
        free(u->batch);
        free(u);
        return NULL;
    }
    pthread_mutex_init(&u->lock, NULL);
    for (int i = 0; i < LEASE_SLOTS; i++)
        pthread_mutex_init(&u->leases[i].lock, NULL);
    bd_uri_redact(u->uri, u->shown, sizeof u->shown);
    return u;
}

static void note_failure(bd_usage *u, const char *what)
{
    if (!atomic_exchange(&u->failing, true))
        bd_log(BD_LOG_WARN, "auth",
               "usage counters: %s in the store at %s; requests are counted in memory until it "
               "takes writes again",
               what, u->shown);
}

static void note_success(bd_usage *u)
{
    if (atomic_load_explicit(&u->failing, memory_order_relaxed) &&
        atomic_exchange(&u->failing, false))
        bd_log(BD_LOG_INFO, "auth", "usage counters are written to the store again");
}

/* The calling thread's connection, opened on first use; NULL when it cannot be opened. */
static bd_store *thread_store(bd_usage *u)
{
    bd_store *s;
    char why[512];
    bd_result r = bd_store_pool_get(u->conns, &s, why, sizeof why);
    if (r == BD_ERR_NOMEM)
        return NULL;
    if (r != BD_OK) {
        note_failure(u, "cannot open a connection");
        return NULL;
    }
    return s;
}

static size_t slot_of(int64_t key_id, int32_t day)
{
    uint64_t h = (uint64_t)key_id * 0x9E3779B97F4A7C15ULL ^ (uint64_t)(uint32_t)day;
    h ^= h >> 29;
    return (size_t)(h & (PENDING_SLOTS - 1));
}

/* Adds count to (key_id, day) under the lock; false when the table is full. */
static bool pend_locked(bd_usage *u, int64_t key_id, int32_t day, int64_t count)
{
    for (size_t i = slot_of(key_id, day), n = 0; n < PENDING_SLOTS;
         n++, i = (i + 1) & (PENDING_SLOTS - 1)) {
        pending *p = &u->table[i];
        if (p->key_id == key_id && p->day == day) {
            p->count += count;
            return true;
        }
        if (p->key_id == 0) {
            *p = (pending){key_id, day, count};
            u->used++;
            return true;
        }
    }
    return false;
}

/* Writes a batch of counts; what the store does not take goes back into the table. */
static void write_batch(bd_usage *u, bd_store *s, const pending *batch, size_t n)
{
    bool ok = s != NULL;
    for (size_t i = 0; i < n; i++) {
        int64_t added = 0, month;
        if (ok && bd_store_usage_add(s, batch[i].key_id, batch[i].day, batch[i].count, 0, &added,
                                     &month) == BD_OK)
            continue;
        if (ok)
            note_failure(u, "a batch of counts was not written");
        ok = false;
        pthread_mutex_lock(&u->lock);
        pend_locked(u, batch[i].key_id, batch[i].day, batch[i].count); /* room: it was taken */
        pthread_mutex_unlock(&u->lock);
    }
    if (ok && n)
        note_success(u);
}

/* Takes the whole table out under the lock into dest (PENDING_SLOTS entries); returns how many. */
static size_t take_table_locked(bd_usage *u, pending *dest)
{
    size_t n = 0;
    for (size_t i = 0; i < PENDING_SLOTS && u->used; i++)
        if (u->table[i].key_id) {
            dest[n++] = u->table[i];
            u->table[i].key_id = 0;
            u->used--;
        }
    return n;
}

/* Counts in memory; a full table is written out first by the calling thread. */
static void pend(bd_usage *u, int64_t key_id, int32_t day, int64_t count)
{
    pthread_mutex_lock(&u->lock);
    if (pend_locked(u, key_id, day, count)) {
        pthread_mutex_unlock(&u->lock);
        return;
    }
    pending *batch = malloc(PENDING_SLOTS * sizeof *batch);
    size_t n = batch ? take_table_locked(u, batch) : 0;
    pend_locked(u, key_id, day, count);
    pthread_mutex_unlock(&u->lock);
    if (batch) {
        write_batch(u, thread_store(u), batch, n);
        free(batch);
    }
}

/* Gives back what a lease has left; false when the store did not take it (the requests
 * then stay counted: never more admitted, only fewer). */
static bool give_back(bd_usage *u, bd_store *s, lease *ls)
{
    if (ls->left <= 0)
        return true;
    bd_result r = s ? bd_store_usage_give_back(s, ls->key_id, ls->day, ls->left) : BD_ERR_BUSY;
    ls->left = 0;
    if (r != BD_OK) {
        note_failure(u, "giving back a lease failed");
        return false;
    }
    return true;
}

/* The lease of key_id, locked: found, a free slot claimed, or the least recently used of the
 * probe window handed over (its unused requests given back first). */
static lease *lease_of(bd_usage *u, bd_store *s, int64_t key_id)
{
    size_t h = slot_of(key_id, 0);
    lease *oldest = NULL;
    int64_t oldest_used = INT64_MAX;
    for (int i = 0; i < LEASE_PROBES; i++) {
        lease *ls = &u->leases[(h + (size_t)i) & (LEASE_SLOTS - 1)];
        pthread_mutex_lock(&ls->lock);
        if (ls->key_id == key_id)
            return ls;
        if (ls->key_id == 0) {
            ls->key_id = key_id;
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
    give_back(u, s, oldest);
    oldest->key_id = key_id;
    oldest->left = 0;
    oldest->want = 1;
    return oldest;
}

/* A request of a key with a quota, from its lease or a new one. 1 admitted, 0 refused, -1
 * the store did not answer (nothing decided), -2 the store takes no writes (a hot standby:
 * it never will). */
static int take_leased(bd_usage *u, bd_store *s, int64_t key_id, int64_t quota, int32_t day,
                       int64_t now_us, int64_t *month_used)
{
    lease *ls = lease_of(u, s, key_id);
    ls->used_us = now_us;
    if (ls->left > 0 && ls->expires_us > now_us && ls->day / 100 == day / 100 &&
        ls->quota == quota) {
        ls->left--;
        *month_used = ls->month - ls->left;
        pthread_mutex_unlock(&ls->lock);
        return 1;
    }
    give_back(u, s, ls);
    int64_t want = ls->want < 1 ? 1 : ls->want, added = 0, month = 0;
    bd_result r = bd_store_usage_add(s, key_id, day, want, quota, &added, &month);
    if (r == BD_OK && added == 0 && want > 1 && month < quota) /* others took some meanwhile */
        r = bd_store_usage_add(s, key_id, day, quota - month < want ? quota - month : want,
                               quota, &added, &month);
    if (r == BD_ERR_READONLY) {
        pthread_mutex_unlock(&ls->lock);
        if (!atomic_exchange(&u->read_only, true))
            bd_log(BD_LOG_WARN, "auth",
                   "usage counters: the store at %s takes no writes (a hot standby); requests of "
                   "keys with a monthly quota are refused here: give --shared-limits the "
                   "primary's URI to count them there",
                   u->shown);
        return -2;
    }
    if (r != BD_OK) {
        pthread_mutex_unlock(&ls->lock);
        note_failure(u, "a quota's count was not written");
        return -1;
    }
    note_success(u);
    int64_t remaining = quota - month;
    ls->want = remaining / LEASE_DIVISOR;
    ls->want = ls->want < 1 ? 1 : ls->want > LEASE_MAX ? LEASE_MAX : ls->want;
    *month_used = month;
    if (added == 0) {
        pthread_mutex_unlock(&ls->lock);
        return 0;
    }
    ls->left = added - 1;
    ls->day = day;
    ls->quota = quota;
    ls->month = month;
    ls->expires_us = now_us + LEASE_US;
    *month_used = month - ls->left;
    pthread_mutex_unlock(&ls->lock);
    return 1;
}

/* Unused requests of key_id's lease counted for day's month (0 when none). */
static int64_t leased_unused(bd_usage *u, int64_t key_id, int32_t day, bool *same_day)
{
    size_t h = slot_of(key_id, 0);
    int64_t n = 0;
    *same_day = false;
    for (int i = 0; i < LEASE_PROBES; i++) {
        lease *ls = &u->leases[(h + (size_t)i) & (LEASE_SLOTS - 1)];
        pthread_mutex_lock(&ls->lock);
        bool found = ls->key_id == key_id;
        if (found && ls->day / 100 == day / 100) {
            n = ls->left;
            *same_day = ls->day == day;
        }
        pthread_mutex_unlock(&ls->lock);
        if (found)
            break;
    }
    return n;
}

bool bd_usage_take(bd_usage *u, int64_t key_id, int64_t quota, int64_t now_us,
                   int64_t *month_used)
{
    int32_t day = bd_usage_day(now_us / 1000000);
    int64_t used = -1;
    if (quota > 0) {
        bd_store *s = thread_store(u);
        int got = s ? take_leased(u, s, key_id, quota, day, now_us, &used) : -1;
        if (month_used)
            *month_used = got >= 0 ? used : -1;
        if (got >= 0 || got == -2) /* fail closed where a count can never be written */
            return got == 1;
    } else if (month_used) {
        *month_used = -1;
    }
    pend(u, key_id, day, 1);
    return true;
}

bool bd_usage_take_many(bd_usage *u, int64_t key_id, int64_t quota, int64_t now_us, int64_t n,
                        int64_t *month_used)
{
    int32_t day = bd_usage_day(now_us / 1000000);
    if (month_used)
        *month_used = -1;
    if (n <= 0)
        return true;
    if (quota > 0) {
        bd_store *s = thread_store(u);
        int64_t added = 0, month = 0;
        bd_result r = s ? bd_store_usage_add(s, key_id, day, n, quota, &added, &month) : BD_ERR_BUSY;
        if (r == BD_OK) {
            note_success(u);
            if (month_used)
                *month_used = month;
            return added > 0;
        }
        note_failure(u, "a quota's count was not written");
    }
    pend(u, key_id, day, n);
    return true;
}

/* Gives back the leases that ran out (all of them when all is true). */
static void give_back_leases(bd_usage *u, bd_store *s, int64_t now_us, bool all)
{
    for (int i = 0; i < LEASE_SLOTS; i++) {
        lease *ls = &u->leases[i];
        if (!all && pthread_mutex_trylock(&ls->lock) != 0)
            continue; /* in use: its owner renews it */
        if (all)
            pthread_mutex_lock(&ls->lock);
        if (ls->left > 0 && (all || ls->expires_us <= now_us))
            give_back(u, s, ls);
        pthread_mutex_unlock(&ls->lock);
    }
}

void bd_usage_flush(bd_usage *u, int64_t now_us)
{
    bd_store *s = thread_store(u);
    give_back_leases(u, s, now_us, false);
    pthread_mutex_lock(&u->lock);
    size_t n = take_table_locked(u, u->batch);
    pthread_mutex_unlock(&u->lock);
    write_batch(u, s, u->batch, n);
}

bd_result bd_usage_get(bd_usage *u, int64_t key_id, int64_t now_us, int64_t *today,
                       int64_t *month)
{
    int32_t day = bd_usage_day(now_us / 1000000);
    bd_store *s = thread_store(u);
    *today = *month = 0;
    bd_result r = s ? bd_store_usage_get(s, key_id, day, today, month) : BD_ERR_BUSY;
    if (r != BD_OK)
        return r;
    bool same_day;
    int64_t unused = leased_unused(u, key_id, day, &same_day);
    *month -= unused < *month ? unused : *month;
    if (same_day)
        *today -= unused < *today ? unused : *today;
    pthread_mutex_lock(&u->lock);
    for (size_t i = 0; i < PENDING_SLOTS && u->used; i++) {
        const pending *p = &u->table[i];
        if (p->key_id != key_id || p->day / 100 != day / 100)
            continue;
        *month += p->count;
        if (p->day == day)
            *today += p->count;
    }
    pthread_mutex_unlock(&u->lock);
    return BD_OK;
}

void bd_usage_free(bd_usage *u)
{
    if (!u)
        return;
    bool leased = false;
    for (int i = 0; i < LEASE_SLOTS && !leased; i++)
        leased = u->leases[i].left > 0;
    if (u->used || leased) {
        bd_store *s = NULL;
        char why[512];
        if (bd_store_pool_open_once(u->conns, &s, why, sizeof why) != BD_OK)
            s = NULL;
        give_back_leases(u, s, 0, true);
        size_t n = take_table_locked(u, u->batch);
        write_batch(u, s, u->batch, n);
        if (u->used)
            bd_log(BD_LOG_ERROR, "auth", "usage counters: %zu counts could not be written",
                   u->used);
        bd_store_close(s);
    }
    if (u->owns_conns)
        bd_store_pool_free(u->conns);
    pthread_mutex_destroy(&u->lock);
    for (int i = 0; i < LEASE_SLOTS; i++)
        pthread_mutex_destroy(&u->leases[i].lock);
    free(u->leases);
    free(u->table);
    free(u->batch);
    free(u->uri);
    free(u);
}
