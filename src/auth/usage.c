/* Per-key usage counters: quotas counted in the store per request, the rest in batches (see
 * usage.h). */
#include "auth/usage.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "store/store.h"
#include "store/uri.h"

#define PENDING_SLOTS 4096 /* (key, day) pairs counted in memory between flushes */

typedef struct {
    int64_t key_id; /* 0: free */
    int32_t day;
    int64_t count;
} pending;

struct bd_usage {
    char *uri;
    char shown[512];        /* uri without its password */
    pthread_key_t conn_key; /* each thread's connection to the store */
    pthread_mutex_t lock;   /* the pending table and the connections list */
    pending *table;         /* open addressing by key and day */
    size_t used;
    pending *batch; /* flush's copy of the table */
    bd_store **conns;
    size_t nconns, capconns;
    _Atomic bool failing; /* the last write failed (logged once) */
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
    bd_usage *u = calloc(1, sizeof *u);
    if (!u)
        return NULL;
    u->uri = strdup(uri);
    u->table = calloc(PENDING_SLOTS, sizeof *u->table);
    u->batch = calloc(PENDING_SLOTS, sizeof *u->batch);
    if (!u->uri || !u->table || !u->batch || pthread_key_create(&u->conn_key, NULL) != 0) {
        free(u->uri);
        free(u->table);
        free(u->batch);
        free(u);
        return NULL;
    }
    pthread_mutex_init(&u->lock, NULL);
    bd_uri_redact(u->uri, u->shown, sizeof u->shown);
    return u;
}

static void note_failure(bd_usage *u, const char *what)
{
    if (!atomic_exchange(&u->failing, true))
        fprintf(stderr,
                "breachd: usage counters: %s in the store at %s; requests are counted in "
                "memory until it takes writes again\n",
                what, u->shown);
}

static void note_success(bd_usage *u)
{
    if (atomic_load_explicit(&u->failing, memory_order_relaxed) &&
        atomic_exchange(&u->failing, false))
        fprintf(stderr, "breachd: usage counters are written to the store again\n");
}

/* The calling thread's connection, opened on first use; NULL when it cannot be opened. */
static bd_store *thread_store(bd_usage *u)
{
    bd_store *s = pthread_getspecific(u->conn_key);
    if (s)
        return s;
    char why[512];
    if (bd_store_open(u->uri, BD_STORE_WRITE, &s, why, sizeof why) != BD_OK) {
        note_failure(u, "cannot open a connection");
        return NULL;
    }
    pthread_mutex_lock(&u->lock);
    if (u->nconns == u->capconns) {
        size_t cap = u->capconns ? u->capconns * 2 : 16;
        bd_store **grown = realloc(u->conns, cap * sizeof *grown);
        if (!grown) {
            pthread_mutex_unlock(&u->lock);
            bd_store_close(s);
            return NULL;
        }
        u->conns = grown;
        u->capconns = cap;
    }
    u->conns[u->nconns++] = s;
    pthread_mutex_unlock(&u->lock);
    pthread_setspecific(u->conn_key, s);
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
static void pend(bd_usage *u, int64_t key_id, int32_t day)
{
    pthread_mutex_lock(&u->lock);
    if (pend_locked(u, key_id, day, 1)) {
        pthread_mutex_unlock(&u->lock);
        return;
    }
    pending *batch = malloc(PENDING_SLOTS * sizeof *batch);
    size_t n = batch ? take_table_locked(u, batch) : 0;
    pend_locked(u, key_id, day, 1);
    pthread_mutex_unlock(&u->lock);
    if (batch) {
        write_batch(u, thread_store(u), batch, n);
        free(batch);
    }
}

bool bd_usage_take(bd_usage *u, int64_t key_id, int64_t quota, int64_t now_us,
                   int64_t *month_used)
{
    int32_t day = bd_usage_day(now_us / 1000000);
    if (month_used)
        *month_used = -1;
    if (quota > 0) {
        bd_store *s = thread_store(u);
        int64_t added, month;
        if (s && bd_store_usage_add(s, key_id, day, 1, quota, &added, &month) == BD_OK) {
            note_success(u);
            if (month_used)
                *month_used = month;
            return added > 0;
        }
        if (s)
            note_failure(u, "a quota's count was not written");
    }
    pend(u, key_id, day);
    return true;
}

void bd_usage_flush(bd_usage *u)
{
    bd_store *s = thread_store(u);
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
    if (u->used) {
        bd_store *s = NULL;
        char why[512];
        if (bd_store_open(u->uri, BD_STORE_WRITE, &s, why, sizeof why) != BD_OK)
            s = NULL;
        size_t n = take_table_locked(u, u->batch);
        write_batch(u, s, u->batch, n);
        if (u->used)
            fprintf(stderr, "breachd: usage counters: %zu counts could not be written\n",
                    u->used);
        bd_store_close(s);
    }
    for (size_t i = 0; i < u->nconns; i++)
        bd_store_close(u->conns[i]);
    free(u->conns);
    pthread_key_delete(u->conn_key);
    pthread_mutex_destroy(&u->lock);
    free(u->table);
    free(u->batch);
    free(u->uri);
    free(u);
}
