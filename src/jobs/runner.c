/* The bulk job runner (job_runner.h): claim, look up each chunk, store its results. */
#include "jobs/runner.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "auth/scope.h"
#include "core/log.h"
#include "jobs/job_key.h"
#include "jobs/result_blob.h"
#include "store/pool.h"
#include "store/store.h"

#define LEASE_S 10       /* a dead runner's job is taken over this long after its last chunk */
#define IDLE_WAIT_MS 1000 /* how often an idle runner looks for jobs without a poke */
#define EXPIRE_EVERY_S 60
#define SLICE_MS 200 /* a job's turn: no chunk is begun after it, then the next key's job */
#define JOB_TTL_S (24 * 3600)
#define TRUNCATE_WAIT_MS 2000 /* for readers of the log, after expired jobs were deleted */
#define TEXT_MAX (64u << 20) /* one chunk's inputs or results: 1,000 identities */

struct bd_job_runner {
    bd_store_pool *writes, *reads; /* each thread's connections (store/pool.h) */
    int64_t pause_ms;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool stopping, poked;
    /* helpers: threads of their own with a store connection each, kept between jobs (a
     * fresh SQLite connection maps the file anew and pays a page fault per page it reads) */
    pthread_t helpers[BD_JOB_THREADS - 1];
    int nhelpers;
    struct job_share *current; /* the job they help with, under lock */
    uint64_t generation;       /* grows with every job handed to them */
    int busy;                  /* helpers still on the current job */
    pthread_cond_t helper_cond, done_cond;
};

/* ---- one chunk ------------------------------------------------------------------------- */

/* What a runner keeps between chunks, so a chunk allocates nothing once warm. */
typedef struct {
    bd_store *store;  /* writes: claims, chunks taken and stored */
    bd_store *reader; /* the lookups, in one read view per job: a view begun anew after
                       * another connection's commit would map the SQLite file anew, and
                       * pay a page fault per page read again */
    bd_buf inputs, results;
    bd_slice keys[BD_JOB_CHUNK];
    int64_t *ids; /* the ids found, key after key */
    size_t nids, cap_ids;
    size_t first[BD_JOB_CHUNK + 1]; /* each key's first id in ids; first[n] = nids */
    int64_t found[BD_JOB_CHUNK];    /* each key's records, as breach-search counts them, or
                                       BD_JOB_FOUND_OUT_OF_SCOPE */
    size_t key;                     /* the key whose ids are arriving */
    bd_slice lookup[BD_JOB_CHUNK];  /* the keys in scope, looked up ... */
    size_t at[BD_JOB_CHUNK];        /* ... and each one's place in keys */
    bool looked_up_all;             /* every key is in scope: lookup and at unused */
    bd_result err;
    bool said;        /* that a store could not be opened, until it can */
    bool said_expire; /* that expired jobs could not be deleted, until they can */
} work;

/* The ids of every key arrive key after key, in search order. */
/* The jobs ended by this process (bd_job_counts_get). */
static _Atomic uint64_t count_done, count_failed;

void bd_job_counts_get(bd_job_counts *out)
{
    out->done = atomic_load_explicit(&count_done, memory_order_relaxed);
    out->failed = atomic_load_explicit(&count_failed, memory_order_relaxed);
}

static int take_id(void *ctx, size_t key, int64_t id)
{
    work *wk = ctx;
    if (!wk->looked_up_all) /* a key of the lookup: its place among the chunk's */
        key = wk->at[key];
    while (wk->key < key)
        wk->first[++wk->key] = wk->nids;
    if (wk->nids == wk->cap_ids) {
        size_t cap = wk->cap_ids ? wk->cap_ids * 2 : 4096;
        int64_t *more = realloc(wk->ids, cap * sizeof *more);
        if (!more) {
            wk->err = BD_ERR_NOMEM;
            return 1;
        }
        wk->ids = more;
        wk->cap_ids = cap;
    }
    wk->ids[wk->nids++] = id;
    return 0;
}

static int stop_at_first(void *ctx, const bd_record_row *row)
{
    (void)ctx;
    (void)row;
    return 1;
}

/* The packed keys of wk->inputs into wk->keys; *n gets how many. */
static bd_result unpack(work *wk, size_t *n)
{
    const uint8_t *p = (const uint8_t *)wk->inputs.data, *end = p + wk->inputs.len;
    *n = 0;
    while (p < end) {
        size_t len = end - p >= 2 ? (size_t)p[0] | (size_t)p[1] << 8 : SIZE_MAX;
        if (len > (size_t)(end - p) - 2 || *n == BD_JOB_CHUNK)
            return BD_ERR_STORE; /* not what jobs.c packed */
        wk->keys[(*n)++] = (bd_slice){(const char *)p + 2, len};
        p += 2 + len;
    }
    return BD_OK;
}

/* Looks up every identity of one chunk (inside the job's read view on wk->reader): the ids of
 * each key's first records in one bulk lookup into wk->ids and wk->first, and its count into
 * wk->found (a second count for a key past BD_JOB_RECORDS_MAX). *n gets how many
 * identities. */
static bd_result run_chunk(work *wk, const bd_job_row *j, const bd_job_key *key, int64_t *n)
{
    size_t count;
    bd_result r = unpack(wk, &count);
    *n = (int64_t)count;
    if (r != BD_OK)
        return r;
    wk->nids = 0;
    wk->key = 0;
    wk->first[0] = 0;
    wk->err = BD_OK;
    /* a tenant key's lines out of scope are not looked up: the others go to the store */
    size_t nlookup = 0;
    bool out[BD_JOB_CHUNK];
    for (size_t i = 0; i < count; i++) {
        out[i] = !bd_job_key_in_scope(key, j->type, wk->keys[i]);
        if (!out[i]) {
            wk->lookup[nlookup] = wk->keys[i];
            wk->at[nlookup++] = i;
        }
    }
    wk->looked_up_all = nlookup == count;
    int64_t scope = bd_scope_record_filter(key->tenant_id, j->type);
    if (nlookup > 0)
        r = bd_store_record_ids(wk->reader, (bd_field)j->type,
                                wk->looked_up_all ? wk->keys : wk->lookup, nlookup,
                                BD_JOB_RECORDS_MAX + 1, take_id, wk, scope);
    if (r == BD_OK)
        r = wk->err;
    while (r == BD_OK && wk->key < count)
        wk->first[++wk->key] = wk->nids;
    for (size_t i = 0; r == BD_OK && i < count; i++) {
        int64_t found = (int64_t)(wk->first[i + 1] - wk->first[i]);
        if (out[i]) {
            found = BD_JOB_FOUND_OUT_OF_SCOPE;
        } else if (found > BD_JOB_RECORDS_MAX) { /* past the cap: as breach-search counts */
            bd_record_query q;
            memset(&q, 0, sizeof q);
            q.field = (bd_field)j->type;
            q.key = wk->keys[i];
            q.scope_tenant = scope;
            q.limit = 1;
            r = bd_store_record_search(wk->reader, &q, stop_at_first, NULL, &found);
        }
        wk->found[i] = found;
    }
    return r;
}

/* ---- what a chunk may keep ------------------------------------------------------------- */


/* The chunk's results into wk->results, with at most `extra` rows past each identity's first
 * (in the order submitted); *rows and *truncated get its rows and its identities cut. */
static bd_result build_results(work *wk, const bd_job_row *j, size_t count, int64_t extra,
                               int64_t *rows, int64_t *truncated)
{
    bool secret = j->type == BD_FIELD_PASSWORD || j->type == BD_FIELD_SSN;
    bd_result r = BD_OK;
    bd_buf_reset(&wk->results);
    *rows = 0;
    *truncated = 0;
    for (size_t i = 0; r == BD_OK && i < count; i++) {
        int64_t found = wk->found[i];
        int64_t full = found < 0 ? 0 : found < BD_JOB_RECORDS_MAX ? found : BD_JOB_RECORDS_MAX;
        int64_t kept = full;
        if (kept > 1 + extra) {
            kept = 1 + extra;
            (*truncated)++;
        }
        if (kept > 1)
            extra -= kept - 1;
        *rows += kept > 1 ? kept : 1;
        r = bd_job_results_add(&wk->results, secret ? (bd_slice){NULL, 0} : wk->keys[i], found,
                               kept ? wk->ids + wk->first[i] : NULL, (uint32_t)kept);
    }
    return r;
}

/* The chunk's rows past its identities' first, as found. */
static int64_t extra_found(const work *wk, size_t count)
{
    int64_t extra = 0;
    for (size_t i = 0; i < count; i++)
        if (wk->found[i] > 1)
            extra += (wk->found[i] < BD_JOB_RECORDS_MAX ? wk->found[i] : BD_JOB_RECORDS_MAX) - 1;
    return extra;
}

/* ---- the thread ------------------------------------------------------------------------ */

static bool stopping(bd_job_runner *rn)
{
    pthread_mutex_lock(&rn->lock);
    bool s = rn->stopping;
    pthread_mutex_unlock(&rn->lock);
    return s;
}

static void sleep_ms(int64_t ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

/* One turn of a job, shared by the threads that look its chunks up: each takes the next
 * chunk without results under the lock, so no two take the same one, until the turn ends. */
typedef struct job_share {
    bd_job_runner *rn;
    const bd_job_row *j;
    bd_job_key key;
    int64_t until_ms; /* the turn's end: no chunk is taken after it */
    pthread_mutex_t lock;
    int64_t cursor; /* chunks below it are taken */
    bool failed;    /* a chunk was not stored: the others stop too */
} job_share;

static int64_t now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Stores a chunk looked up into wk (count identities): what the key's limit on rows and its
 * quota let it keep, counted against them. Under sh->lock, so the runner's threads take the
 * key's room one at a time; BD_ERR_LIMIT from the store (another server's runner took the
 * room meanwhile) is answered by asking again, and at the last try by keeping no extra
 * rows. Rows counted once against the quota stay counted: never twice, never given back. */
static bd_result store_chunk(job_share *sh, work *wk, int64_t chunk_no, size_t count)
{
    const bd_job_row *j = sh->j;
    int64_t want = extra_found(wk, count), counted = 0;
    bd_result r = BD_ERR_LIMIT;
    for (int tries = 0; r == BD_ERR_LIMIT && tries < 3; tries++) {
        int64_t extra = 0;
        if (tries < 2 && want > 0 &&
            (r = bd_job_key_rows_room(wk->store, &sh->key, want, &extra)) != BD_OK)
            return r;
        if (extra > counted) {
            int64_t more = extra - counted;
            if ((r = bd_job_key_count_rows(wk->store, &sh->key, &more)) != BD_OK)
                return r;
            extra = counted += more;
        }
        bd_job_chunk_out c = {.chunk_no = chunk_no, .n = (int64_t)count,
                              .lease_until = (int64_t)time(NULL) + LEASE_S,
                              .max_rows = sh->key.max_rows};
        r = build_results(wk, j, count, extra, &c.rows, &c.truncated);
        c.results = (bd_slice){wk->results.data, wk->results.len};
        if (r == BD_OK)
            r = bd_store_job_chunk_done(wk->store, j->uuid, j->lease, &c);
    }
    return r;
}

/* Takes chunks and stores their results until none is left, the turn ends, one fails, or
 * the runner stops. */
static void take_chunks_in_view(job_share *sh, work *wk)
{
    const bd_job_row *j = sh->j;
    while (!stopping(sh->rn) && now_ms() < sh->until_ms) {
        int64_t chunk_no = -1, n;
        pthread_mutex_lock(&sh->lock);
        bd_result r = sh->failed ? BD_ERR_NOT_FOUND
                                 : bd_store_job_next_chunk(wk->store, j->uuid, sh->cursor,
                                                           &chunk_no, &wk->inputs);
        if (r == BD_OK)
            sh->cursor = chunk_no + 1;
        pthread_mutex_unlock(&sh->lock);
        if (r == BD_ERR_NOT_FOUND)
            return;
        if (r == BD_OK)
            r = run_chunk(wk, j, &sh->key, &n);
        if (r == BD_OK && sh->rn->pause_ms > 0)
            sleep_ms(sh->rn->pause_ms);
        /* one writer at a time: two threads of one process meeting at SQLite's write lock
         * would wait in its busy handler, which sleeps a millisecond and more */
        pthread_mutex_lock(&sh->lock);
        if (r == BD_OK)
            r = store_chunk(sh, wk, chunk_no, (size_t)n);
        pthread_mutex_unlock(&sh->lock);
        if (r != BD_OK) { /* the lease runs out and the job is claimed again */
            bd_log(BD_LOG_WARN, "jobs", "job %s: chunk %lld not stored (%s); retried later",
                   j->uuid, (long long)chunk_no, bd_result_str(r));
            pthread_mutex_lock(&sh->lock);
            sh->failed = true;
            pthread_mutex_unlock(&sh->lock);
            return;
        }
    }
}

/* Takes wk's connections that are not open yet from the pools; false (said once) when one
 * cannot be opened. */
static bool open_stores(bd_job_runner *rn, work *wk)
{
    char why[256];
    if (!wk->store && bd_store_pool_get(rn->writes, &wk->store, why, sizeof why) != BD_OK)
        wk->store = NULL;
    else if (!wk->reader && bd_store_pool_get(rn->reads, &wk->reader, why, sizeof why) != BD_OK)
        wk->reader = NULL;
    if (wk->store && wk->reader) {
        wk->said = false;
        return true;
    }
    if (!wk->said)
        bd_log(BD_LOG_ERROR, "jobs", "job runner: %s", why);
    wk->said = true;
    return false;
}

/* The same, all in one read view of wk->reader. */
static void take_chunks(job_share *sh, work *wk)
{
    if (bd_store_read_begin(wk->reader) == BD_OK)
        take_chunks_in_view(sh, wk);
    bd_store_read_end(wk->reader);
}

static work *work_new(bd_job_runner *rn)
{
    work *wk = calloc(1, sizeof *wk);
    if (!wk)
        return NULL;
    bd_buf_init(&wk->inputs, TEXT_MAX);
    bd_buf_init(&wk->results, TEXT_MAX);
    if (rn)
        open_stores(rn, wk);
    return wk;
}

static void work_free(work *wk)
{
    if (!wk)
        return;
    /* its connections are the pools' */
    bd_buf_free(&wk->inputs);
    bd_buf_free(&wk->results);
    free(wk->ids);
    free(wk);
}

/* nice applies per thread on Linux: searches come first when the cores are busy */
static void lower_priority(void)
{
    setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 10);
}

static void *help(void *arg)
{
    bd_job_runner *rn = arg;
    lower_priority();
    work *wk = work_new(rn);
    uint64_t seen = 0;
    pthread_mutex_lock(&rn->lock);
    for (;;) {
        while (!rn->stopping && rn->generation == seen)
            pthread_cond_wait(&rn->helper_cond, &rn->lock);
        if (rn->stopping)
            break;
        seen = rn->generation;
        job_share *sh = rn->current;
        pthread_mutex_unlock(&rn->lock);
        if (wk && open_stores(rn, wk))
            take_chunks(sh, wk);
        pthread_mutex_lock(&rn->lock);
        rn->busy--;
        pthread_cond_signal(&rn->done_cond);
    }
    pthread_mutex_unlock(&rn->lock);
    work_free(wk);
    return NULL;
}

/* Runs a claimed job for one turn (SLICE_MS) on the runner's thread and its helpers: until
 * it is done, its turn ends (it is yielded, to be claimed again in its key's turn), it
 * fails, or the runner stops. */
static void run_job(bd_job_runner *rn, work *wk, const bd_job_row *j)
{
    if (j->attempts > BD_JOB_MAX_ATTEMPTS) {
        bd_log(BD_LOG_ERROR, "jobs", "job %s failed: claimed %lld times without finishing", j->uuid,
               (long long)j->attempts);
        if (bd_store_job_finish(wk->store, j->uuid, j->lease, BD_JOB_FAILED,
                                (int64_t)time(NULL)) == BD_OK)
            atomic_fetch_add_explicit(&count_failed, 1, memory_order_relaxed);
        return;
    }
    job_share sh = {.rn = rn, .j = j, .until_ms = now_ms() + SLICE_MS};
    bd_job_key_load(wk->store, j->key_id, &sh.key);
    pthread_mutex_init(&sh.lock, NULL);
    pthread_mutex_lock(&rn->lock);
    rn->current = &sh;
    rn->generation++;
    rn->busy = rn->nhelpers;
    pthread_cond_broadcast(&rn->helper_cond);
    pthread_mutex_unlock(&rn->lock);
    take_chunks(&sh, wk);
    pthread_mutex_lock(&rn->lock);
    while (rn->busy > 0)
        pthread_cond_wait(&rn->done_cond, &rn->lock);
    rn->current = NULL;
    pthread_mutex_unlock(&rn->lock);
    pthread_mutex_destroy(&sh.lock);
    bd_job_key_free(&sh.key);
    int64_t chunk_no;
    if (sh.failed || stopping(rn))
        return;
    bd_result r = bd_store_job_next_chunk(wk->store, j->uuid, 0, &chunk_no, &wk->inputs);
    if (r == BD_OK) { /* its turn is over: the next key's job, or this one again */
        r = bd_store_job_yield(wk->store, j->uuid, j->lease);
        if (r != BD_OK && r != BD_ERR_BUSY)
            bd_log(BD_LOG_WARN, "jobs", "job %s: could not end its turn (%s); its lease runs out",
                   j->uuid, bd_result_str(r));
        return;
    }
    if (r != BD_ERR_NOT_FOUND)
        return;
    r = bd_store_job_finish(wk->store, j->uuid, j->lease, BD_JOB_DONE, (int64_t)time(NULL));
    if (r == BD_OK)
        atomic_fetch_add_explicit(&count_done, 1, memory_order_relaxed);
    if (r != BD_OK)
        bd_log(BD_LOG_ERROR, "jobs", "job %s: could not mark it done (%s)", j->uuid,
               bd_result_str(r));
}

/* Waits for a poke, the stop, or ms; false once stopping. */
static bool wait_for_work(bd_job_runner *rn, int64_t ms)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += ms / 1000;
    until.tv_nsec += (ms % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&rn->lock);
    if (!rn->stopping && !rn->poked)
        pthread_cond_timedwait(&rn->cond, &rn->lock, &until);
    rn->poked = false;
    bool go_on = !rn->stopping;
    pthread_mutex_unlock(&rn->lock);
    return go_on;
}

/* Deletes the jobs past their day, and empties the store's log of them as erasure does
 * (their bytes were overwritten in the main file; the log's copies go too), waiting at most
 * TRUNCATE_WAIT_MS for readers: a busy log is emptied at the next round that removes a job,
 * or by the store's own checkpoints. A store that takes no writes (a hot standby: its
 * primary's servers do this) is said once, not every minute. */
static void expire(work *wk, int64_t now)
{
    int64_t removed = 0;
    bd_result r = bd_store_job_expire(wk->store, now - JOB_TTL_S, &removed);
    if (r != BD_OK && !wk->said_expire)
        bd_log(BD_LOG_ERROR, "jobs", "deleting expired jobs failed (%s); said once",
               bd_result_str(r));
    wk->said_expire = r != BD_OK;
    if (r == BD_OK && removed > 0)
        bd_store_truncate_log(wk->store, TRUNCATE_WAIT_MS);
}

static void *run(void *arg)
{
    bd_job_runner *rn = arg;
    lower_priority();
    work *wk = work_new(NULL);
    if (!wk)
        return NULL;
    for (int i = 0; i < BD_JOB_THREADS - 1; i++) /* a helper that does not start: fewer */
        if (pthread_create(&rn->helpers[rn->nhelpers], NULL, help, rn) == 0)
            rn->nhelpers++;
    int64_t expired_at = 0;
    do {
        if (!open_stores(rn, wk))
            continue;
        int64_t now = (int64_t)time(NULL);
        if (now - expired_at >= EXPIRE_EVERY_S) {
            expire(wk, now);
            expired_at = now;
        }
        bd_job_row j;
        while (!stopping(rn) &&
               bd_store_job_claim(wk->store, (int64_t)time(NULL), LEASE_S, &j) == BD_OK)
            run_job(rn, wk, &j);
    } while (wait_for_work(rn, IDLE_WAIT_MS));
    for (int i = 0; i < rn->nhelpers; i++) /* stopping is set: each leaves its wait */
        pthread_join(rn->helpers[i], NULL);
    work_free(wk);
    return NULL;
}

bd_job_runner *bd_job_runner_start(bd_store_pool *writes, bd_store_pool *reads, int64_t pause_ms)
{
    bd_job_runner *rn = calloc(1, sizeof *rn);
    if (!rn)
        return NULL;
    rn->writes = writes;
    rn->reads = reads;
    rn->pause_ms = pause_ms;
    pthread_mutex_init(&rn->lock, NULL);
    pthread_cond_init(&rn->cond, NULL);
    pthread_cond_init(&rn->helper_cond, NULL);
    pthread_cond_init(&rn->done_cond, NULL);
    if (pthread_create(&rn->thread, NULL, run, rn) != 0) {
        pthread_mutex_destroy(&rn->lock);
        pthread_cond_destroy(&rn->cond);
        pthread_cond_destroy(&rn->helper_cond);
        pthread_cond_destroy(&rn->done_cond);
        free(rn);
        return NULL;
    }
    return rn;
}

void bd_job_runner_poke(bd_job_runner *rn)
{
    if (!rn)
        return;
    pthread_mutex_lock(&rn->lock);
    rn->poked = true;
    pthread_cond_signal(&rn->cond);
    pthread_mutex_unlock(&rn->lock);
}

void bd_job_runner_stop(bd_job_runner *rn)
{
    if (!rn)
        return;
    pthread_mutex_lock(&rn->lock);
    rn->stopping = true;
    pthread_cond_signal(&rn->cond);
    pthread_cond_broadcast(&rn->helper_cond);
    pthread_mutex_unlock(&rn->lock);
    pthread_join(rn->thread, NULL); /* joins the helpers it started */
    pthread_mutex_destroy(&rn->lock);
    pthread_cond_destroy(&rn->cond);
    pthread_cond_destroy(&rn->helper_cond);
    pthread_cond_destroy(&rn->done_cond);
    free(rn);
}
