/* The lookup log's buffer (auth/lookup_log.h). */
#include "auth/lookup_log.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sodium.h>

#include "auth/secret.h"
#include "ingest/normalize.h"

#define MANY_BATCH 4096 /* rows per transaction of bd_lookup_log_write_many */
#define SEEN_CAP 131072u /* searches remembered per minute (a power of two) */
#define SEEN_MAX (SEEN_CAP / 4 * 3) /* past this, repeats are logged again */

struct bd_lookup_log {
    pthread_mutex_t lock; /* filling, n, dropped, woken */
    pthread_cond_t cond;
    bd_lookup_row *filling; /* what requests note into */
    size_t n;
    int64_t dropped;
    bool woken;
    /* the searches of each minute, in the set of its parity, as tags (a keyed 64-bit hash of
     * key, type, identity and minute; 0: a free slot), open addressing without a lock: a
     * slot is claimed by compare-and-swap. The set of the next minute is emptied by
     * bd_lookup_log_tick during this one. */
    _Atomic uint64_t *seen[2];
    atomic_size_t seen_n[2];
    int64_t cleared_minute; /* the tick's */
    uint8_t tag_key[crypto_shorthash_KEYBYTES]; /* random, this process's */
    pthread_mutex_t flush_lock; /* writing, wn */
    bd_lookup_row *writing;     /* what a flush writes; kept after a failure */
    size_t wn;
};

bd_lookup_log *bd_lookup_log_new(void)
{
    bd_lookup_log *l = calloc(1, sizeof *l);
    if (!l)
        return NULL;
    l->filling = calloc(BD_LOOKUP_LOG_CAP, sizeof *l->filling);
    l->writing = calloc(BD_LOOKUP_LOG_CAP, sizeof *l->writing);
    for (int k = 0; k < 2; k++) {
        l->seen[k] = calloc(SEEN_CAP, sizeof *l->seen[k]);
        atomic_init(&l->seen_n[k], 0);
    }
    if (!l->filling || !l->writing || !l->seen[0] || !l->seen[1]) {
        free(l->filling);
        free(l->writing);
        free((void *)l->seen[0]);
        free((void *)l->seen[1]);
        free(l);
        return NULL;
    }
    for (int k = 0; k < 2; k++)
        for (size_t i = 0; i < SEEN_CAP; i++)
            atomic_init(&l->seen[k][i], 0);
    randombytes_buf(l->tag_key, sizeof l->tag_key);
    l->cleared_minute = -1;
    pthread_mutex_init(&l->lock, NULL);
    pthread_cond_init(&l->cond, NULL);
    pthread_mutex_init(&l->flush_lock, NULL);
    return l;
}

void bd_lookup_log_free(bd_lookup_log *l)
{
    if (!l)
        return;
    pthread_mutex_destroy(&l->lock);
    pthread_cond_destroy(&l->cond);
    pthread_mutex_destroy(&l->flush_lock);
    free(l->filling);
    free(l->writing);
    free((void *)l->seen[0]);
    free((void *)l->seen[1]);
    free(l);
}

void bd_lookup_hash(const uint8_t *secret, int type, bd_slice key, uint8_t out[32])
{
    char text[32 + BD_NORM_MAX + 1];
    const char *name = bd_id_type_name((bd_id_type)type);
    size_t nl = strlen(name);
    size_t kl = key.len <= BD_NORM_MAX ? key.len : BD_NORM_MAX;
    memcpy(text, name, nl);
    text[nl] = ':';
    if (kl)
        memcpy(text + nl + 1, key.ptr, kl);
    bd_keyed_hash(secret, "lookup", text, nl + 1 + kl, out);
    sodium_memzero(text, nl + 1 + kl); /* a password's keyed hash, maybe */
}

/* The search's tag: SipHash-2-4 (keyed per process) of minute, key id, type and lookup key;
 * never 0. */
static uint64_t tag_of(const bd_lookup_log *l, int64_t minute, int64_t key_id, int type,
                       bd_slice key)
{
    uint8_t in[17 + BD_NORM_MAX + 1];
    size_t kl = key.len <= BD_NORM_MAX + 1 ? key.len : BD_NORM_MAX + 1;
    memcpy(in, &minute, 8);
    memcpy(in + 8, &key_id, 8);
    in[16] = (uint8_t)type;
    if (kl)
        memcpy(in + 17, key.ptr, kl);
    uint8_t h[crypto_shorthash_BYTES];
    crypto_shorthash(h, in, 17 + kl, l->tag_key);
    uint64_t t;
    memcpy(&t, h, sizeof t);
    return t ? t : 1;
}

/* Whether the search was noted already in its minute; remembers it if not (while there is
 * room: past SEEN_MAX every search is noted). No lock: a free slot is claimed by CAS, and
 * of two threads noting one search at once exactly one claims it. */
static bool seen_before(bd_lookup_log *l, int64_t minute, uint64_t tag)
{
    _Atomic uint64_t *set = l->seen[minute & 1];
    atomic_size_t *n = &l->seen_n[minute & 1];
    size_t i = tag & (SEEN_CAP - 1);
    for (size_t probes = 0; probes < SEEN_CAP; probes++, i = (i + 1) & (SEEN_CAP - 1)) {
        uint64_t v = atomic_load_explicit(&set[i], memory_order_relaxed);
        while (v == 0) {
            if (atomic_load_explicit(n, memory_order_relaxed) >= SEEN_MAX)
                return false;
            if (atomic_compare_exchange_weak_explicit(&set[i], &v, tag, memory_order_relaxed,
                                                      memory_order_relaxed)) {
                atomic_fetch_add_explicit(n, 1, memory_order_relaxed);
                return false;
            }
        }
        if (v == tag)
            return true;
    }
    return false;
}

void bd_lookup_log_tick(bd_lookup_log *l, int64_t now)
{
    int64_t minute = now / 60;
    if (minute == l->cleared_minute)
        return;
    /* the set the next minute uses held the last minute's: empty it (a request of that
     * minute still noting into it at worst logs a repeat twice) */
    _Atomic uint64_t *set = l->seen[(minute + 1) & 1];
    for (size_t i = 0; i < SEEN_CAP; i++)
        atomic_store_explicit(&set[i], 0, memory_order_relaxed);
    atomic_store_explicit(&l->seen_n[(minute + 1) & 1], 0, memory_order_relaxed);
    l->cleared_minute = minute;
}

void bd_lookup_log_note(bd_lookup_log *l, const uint8_t *secret, int64_t at, int64_t key_id,
                        int type, bd_slice key)
{
    int64_t minute = at / 60;
    if (seen_before(l, minute, tag_of(l, minute, key_id, type, key)))
        return; /* this key searched this identity this minute already: its row is there */
    bd_lookup_row row = {.at = at, .key_id = key_id, .type = type};
    bd_lookup_hash(secret, type, key, row.hash); /* outside the lock */
    pthread_mutex_lock(&l->lock);
    if (l->n < BD_LOOKUP_LOG_CAP) {
        l->filling[l->n++] = row;
        if (l->n == BD_LOOKUP_LOG_CAP / 2)
            pthread_cond_signal(&l->cond);
    } else {
        l->dropped++;
    }
    pthread_mutex_unlock(&l->lock);
}

bd_result bd_lookup_log_flush(bd_lookup_log *l, bd_store *s, size_t *written)
{
    if (written)
        *written = 0;
    pthread_mutex_lock(&l->flush_lock);
    bd_result r = BD_OK;
    for (int round = 0; round < 2 && r == BD_OK; round++) {
        if (l->wn == 0) { /* take what was noted; requests fill the emptied buffer */
            pthread_mutex_lock(&l->lock);
            memcpy(l->writing, l->filling, l->n * sizeof *l->filling);
            l->wn = l->n;
            l->n = 0;
            pthread_mutex_unlock(&l->lock);
        }
        if (l->wn == 0)
            break;
        r = bd_store_lookup_add(s, l->writing, l->wn);
        if (r == BD_OK) {
            if (written)
                *written += l->wn;
            l->wn = 0;
        }
        /* a kept failure's rows went first: the second round takes what came since */
    }
    pthread_mutex_unlock(&l->flush_lock);
    return r;
}

bd_result bd_lookup_log_write_many(bd_store *s, const uint8_t *secret, int64_t at, int64_t key_id,
                                   int type, const bd_slice *keys, size_t n)
{
    bd_lookup_row *rows = malloc((n < MANY_BATCH ? n : MANY_BATCH) * sizeof *rows + 1);
    if (!rows)
        return BD_ERR_NOMEM;
    bd_result r = BD_OK;
    for (size_t i = 0; i < n && r == BD_OK;) {
        size_t m = 0;
        for (; i < n && m < MANY_BATCH; i++, m++) {
            rows[m] = (bd_lookup_row){.at = at, .key_id = key_id, .type = type};
            bd_lookup_hash(secret, type, keys[i], rows[m].hash);
        }
        r = bd_store_lookup_add(s, rows, m);
    }
    free(rows);
    return r;
}

bool bd_lookup_log_wait(bd_lookup_log *l, long ms)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += ms / 1000;
    until.tv_nsec += (ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&l->lock);
    int rc = 0;
    while (!l->woken && l->n < BD_LOOKUP_LOG_CAP / 2 && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&l->cond, &l->lock, &until);
    bool woke = rc != ETIMEDOUT;
    l->woken = false;
    pthread_mutex_unlock(&l->lock);
    return woke;
}

void bd_lookup_log_wake(bd_lookup_log *l)
{
    pthread_mutex_lock(&l->lock);
    l->woken = true;
    pthread_cond_broadcast(&l->cond);
    pthread_mutex_unlock(&l->lock);
}

int64_t bd_lookup_log_take_dropped(bd_lookup_log *l)
{
    pthread_mutex_lock(&l->lock);
    int64_t d = l->dropped;
    l->dropped = 0;
    pthread_mutex_unlock(&l->lock);
    return d;
}
