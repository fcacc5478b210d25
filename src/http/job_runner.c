/* The bulk job runner (job_runner.h): claim, look up each chunk, store its results. */
#include "http/job_runner.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "http/job_results.h"
#include "store/store.h"

#define LEASE_S 10       /* a dead runner's job is taken over this long after its last chunk */
#define IDLE_WAIT_MS 1000 /* how often an idle runner looks for jobs without a poke */
#define EXPIRE_EVERY_S 60
#define JOB_TTL_S (24 * 3600)
#define TEXT_MAX (64u << 20) /* one chunk's inputs or results: 1,000 identities */

struct bd_job_runner {
    char uri[1024];
    int64_t pause_ms;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool stopping, poked;
};

/* ---- one chunk ------------------------------------------------------------------------- */

/* What a runner keeps between chunks, so a chunk allocates nothing once warm. */
typedef struct {
    bd_store *store;
    bd_buf inputs, results;
    bd_slice keys[BD_JOB_CHUNK];
    int64_t *ids; /* the ids found, key after key */
    size_t nids, cap_ids;
    size_t first[BD_JOB_CHUNK + 1]; /* each key's first id in ids; first[n] = nids */
    size_t key;                     /* the key whose ids are arriving */
    bd_result err;
} work;

/* The ids of every key arrive key after key, in search order. */
static int take_id(void *ctx, size_t key, int64_t id)
{
    work *wk = ctx;
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

/* Looks up every identity of one chunk, all in one read view: the ids of each key's first
 * records in one bulk lookup, a count for a key past BD_JOB_RECORDS_MAX, into wk->results.
 * *n gets how many identities. */
static bd_result run_chunk(work *wk, const bd_job_row *j, int64_t *n)
{
    size_t count;
    bd_result r = unpack(wk, &count);
    *n = (int64_t)count;
    if (r != BD_OK)
        return r;
    bd_buf_reset(&wk->results);
    wk->nids = 0;
    wk->key = 0;
    wk->first[0] = 0;
    wk->err = BD_OK;
    r = bd_store_read_begin(wk->store);
    if (r == BD_OK)
        r = bd_store_record_ids(wk->store, (bd_field)j->type, wk->keys, count,
                                BD_JOB_RECORDS_MAX + 1, take_id, wk);
    if (r == BD_OK)
        r = wk->err;
    while (r == BD_OK && wk->key < count)
        wk->first[++wk->key] = wk->nids;
    bool secret = j->type == BD_FIELD_PASSWORD || j->type == BD_FIELD_SSN;
    for (size_t i = 0; r == BD_OK && i < count; i++) {
        int64_t found = (int64_t)(wk->first[i + 1] - wk->first[i]);
        if (found > BD_JOB_RECORDS_MAX) { /* past the cap: counted as breach-search counts */
            bd_record_query q;
            memset(&q, 0, sizeof q);
            q.field = (bd_field)j->type;
            q.key = wk->keys[i];
            q.limit = 1;
            r = bd_store_record_search(wk->store, &q, stop_at_first, NULL, &found);
        }
        int64_t kept = found < BD_JOB_RECORDS_MAX ? found : BD_JOB_RECORDS_MAX;
        if (r == BD_OK)
            r = bd_job_results_add(&wk->results, secret ? (bd_slice){NULL, 0} : wk->keys[i],
                                   found, wk->ids + wk->first[i], (uint32_t)kept);
    }
    bd_store_read_end(wk->store);
    return r;
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

/* Runs a claimed job until it is done, fails, or the runner stops. */
static void run_job(bd_job_runner *rn, work *wk, bd_job_row *j)
{
    if (j->attempts > BD_JOB_MAX_ATTEMPTS) {
        fprintf(stderr, "breachd: job %s failed: claimed %lld times without finishing\n",
                j->uuid, (long long)j->attempts);
        bd_store_job_finish(wk->store, j->uuid, j->lease, BD_JOB_FAILED, (int64_t)time(NULL));
        return;
    }
    while (!stopping(rn)) {
        int64_t chunk_no, n;
        bd_result r = bd_store_job_next_chunk(wk->store, j->uuid, &chunk_no, &wk->inputs);
        if (r == BD_ERR_NOT_FOUND) {
            r = bd_store_job_finish(wk->store, j->uuid, j->lease, BD_JOB_DONE,
                                    (int64_t)time(NULL));
            if (r != BD_OK)
                fprintf(stderr, "breachd: job %s: could not mark it done (%s)\n", j->uuid,
                        bd_result_str(r));
            return;
        }
        if (r == BD_OK)
            r = run_chunk(wk, j, &n);
        if (r == BD_OK && rn->pause_ms > 0)
            sleep_ms(rn->pause_ms);
        if (r == BD_OK)
            r = bd_store_job_chunk_done(wk->store, j->uuid, j->lease, chunk_no, n,
                                        (bd_slice){wk->results.data, wk->results.len},
                                        (int64_t)time(NULL) + LEASE_S);
        if (r != BD_OK) { /* the lease runs out and the job is claimed again */
            fprintf(stderr, "breachd: job %s: chunk %lld not stored (%s); retried later\n",
                    j->uuid, (long long)chunk_no, bd_result_str(r));
            return;
        }
    }
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

static void expire(work *wk, int64_t now)
{
    int64_t removed;
    bd_result r = bd_store_job_expire(wk->store, now - JOB_TTL_S, &removed);
    if (r != BD_OK)
        fprintf(stderr, "breachd: deleting expired jobs failed (%s)\n", bd_result_str(r));
}

static void *run(void *arg)
{
    bd_job_runner *rn = arg;
    /* nice applies per thread on Linux: searches come first when the cores are busy */
    setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 10);
    work *wk = calloc(1, sizeof *wk);
    if (!wk)
        return NULL;
    bd_buf_init(&wk->inputs, TEXT_MAX);
    bd_buf_init(&wk->results, TEXT_MAX);
    int64_t expired_at = 0;
    bool said = false;
    do {
        char why[256];
        if (!wk->store && bd_store_open(rn->uri, BD_STORE_WRITE | BD_STORE_SMALL_WRITES,
                                        &wk->store, why, sizeof why) != BD_OK) {
            if (!said)
                fprintf(stderr, "breachd: job runner: %s\n", why);
            said = true;
            wk->store = NULL;
            continue;
        }
        said = false;
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
    bd_store_close(wk->store);
    bd_buf_free(&wk->inputs);
    bd_buf_free(&wk->results);
    free(wk->ids);
    free(wk);
    return NULL;
}

bd_job_runner *bd_job_runner_start(const char *uri, int64_t pause_ms)
{
    bd_job_runner *rn = calloc(1, sizeof *rn);
    if (!rn)
        return NULL;
    snprintf(rn->uri, sizeof rn->uri, "%s", uri);
    rn->pause_ms = pause_ms;
    pthread_mutex_init(&rn->lock, NULL);
    pthread_cond_init(&rn->cond, NULL);
    if (pthread_create(&rn->thread, NULL, run, rn) != 0) {
        pthread_mutex_destroy(&rn->lock);
        pthread_cond_destroy(&rn->cond);
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
    pthread_mutex_unlock(&rn->lock);
    pthread_join(rn->thread, NULL);
    pthread_mutex_destroy(&rn->lock);
    pthread_cond_destroy(&rn->cond);
    free(rn);
}
