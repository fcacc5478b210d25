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

#include "core/json.h"
#include "http/request.h"
#include "store/store.h"

#define LEASE_S 10       /* a dead runner's job is taken over this long after its last chunk */
#define IDLE_WAIT_MS 1000 /* how often an idle runner looks for jobs without a poke */
#define EXPIRE_EVERY_S 60
#define JOB_TTL_S (24 * 3600)
#define TEXT_MAX (256u << 20) /* one chunk's results: 1,000 identities of 1,000 records */

struct bd_job_runner {
    char uri[1024];
    int64_t pause_ms;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool stopping, poked;
};

/* ---- the breaches of a job's records ----------------------------------------------------- */

/* Breach uuid and source name by breach_id, kept for one job: an open-addressed table. */
typedef struct {
    int64_t id; /* 0: empty slot */
    char uuid[BD_UUID_LEN + 1];
    char *name;
} breach_entry;

typedef struct {
    breach_entry *slots;
    size_t cap, used; /* cap a power of two */
} breach_cache;

static void cache_clear(breach_cache *c)
{
    for (size_t i = 0; i < c->cap; i++)
        free(c->slots[i].name);
    free(c->slots);
    *c = (breach_cache){0};
}

static breach_entry *cache_slot(breach_cache *c, int64_t id)
{
    size_t i = ((uint64_t)id * 0x9E3779B97F4A7C15ull) >> 20 & (c->cap - 1);
    while (c->slots[i].id && c->slots[i].id != id)
        i = (i + 1) & (c->cap - 1);
    return &c->slots[i];
}

static bool cache_grow(breach_cache *c)
{
    breach_cache bigger = {calloc(c->cap ? c->cap * 2 : 256, sizeof(breach_entry)),
                           c->cap ? c->cap * 2 : 256, c->used};
    if (!bigger.slots)
        return false;
    for (size_t i = 0; i < c->cap; i++)
        if (c->slots[i].id)
            *cache_slot(&bigger, c->slots[i].id) = c->slots[i];
    free(c->slots);
    *c = bigger;
    return true;
}

static int keep_breach(void *ctx, const bd_breach_row *b)
{
    breach_entry *e = ctx;
    size_t n = b->uuid.len < BD_UUID_LEN ? b->uuid.len : BD_UUID_LEN;
    memcpy(e->uuid, b->uuid.ptr, n);
    e->uuid[n] = '\0';
    e->name = malloc(b->source_name.len + 1);
    if (e->name) {
        memcpy(e->name, b->source_name.ptr ? b->source_name.ptr : "", b->source_name.len);
        e->name[b->source_name.len] = '\0';
    }
    return 0;
}

/* The breach of id, read from the store on first use; NULL when it failed. */
static const breach_entry *breach_of(breach_cache *c, bd_store *s, int64_t id)
{
    if ((c->used + 1) * 2 > c->cap && !cache_grow(c))
        return NULL;
    breach_entry *e = cache_slot(c, id);
    if (e->id)
        return e;
    breach_entry fresh = {.id = id};
    bd_result r = bd_store_breach_by_id(s, id, keep_breach, &fresh);
    if (r != BD_OK || !fresh.name) {
        free(fresh.name);
        return NULL;
    }
    *e = fresh;
    c->used++;
    return e;
}

/* ---- one chunk ------------------------------------------------------------------------- */

typedef struct {
    const breach_entry *breach;
    size_t json_at, json_end, csv_at, csv_end;
} found_record;

/* What a runner keeps between chunks and jobs, so a chunk allocates nothing once warm. */
typedef struct {
    bd_store *store;
    breach_cache breaches;
    bd_buf inputs, jsonl, csv;
    bd_buf rec_json, rec_csv; /* one identity's records, before they are grouped */
    bd_json w;
    found_record recs[BD_JOB_RECORDS_MAX + 1];
    int order[BD_JOB_RECORDS_MAX]; /* recs in the order written (group) */
    int nrecs;
    bd_result err;
} work;

static const char CSV_HEADER[] =
    "index,type,account,found,breach_id,source_name,user_name,first_name,last_name,email,"
    "email_domain,phone_number,ip_address,bitcoin_address,password,password_hash,"
    "other_attributes,social_security_number,severity\r\n";

const char *bd_job_csv_header(void)
{
    return CSV_HEADER;
}

bd_result bd_job_csv_cell(bd_buf *out, bd_slice v)
{
    if (!v.ptr || v.len == 0)
        return BD_OK;
    bd_result r = bd_buf_append_char(out, '"');
    if (r == BD_OK && strchr("=+-@\t\r", v.ptr[0]))
        r = bd_buf_append_char(out, '\'');
    for (size_t i = 0, from = 0; r == BD_OK && i <= v.len; i++) {
        if (i == v.len || v.ptr[i] == '"') {
            r = bd_buf_append(out, v.ptr + from, i - from + (i < v.len)); /* a quote twice */
            from = i;
        }
    }
    return r == BD_OK ? bd_buf_append_char(out, '"') : r;
}

static bd_result csv_cells(bd_buf *out, const bd_record_row *r)
{
    const bd_slice cells[] = {r->user_name,     r->first_name,       r->last_name,
                              r->email,         r->email_domain,     r->phone_number,
                              r->ip_address,    r->bitcoin_address,  r->password_masked,
                              r->password_hash, r->other_attributes, r->ssn_masked};
    bd_result res = BD_OK;
    for (size_t i = 0; res == BD_OK && i < sizeof cells / sizeof cells[0]; i++) {
        res = bd_buf_append_char(out, ',');
        if (res == BD_OK)
            res = bd_job_csv_cell(out, cells[i]);
    }
    if (res == BD_OK)
        res = bd_buf_append_char(out, ',');
    return res == BD_OK ? bd_buf_append_str(out, bd_severity_name(r->severity)) : res;
}

/* One record of the identity being looked up: its JSON and its CSV cells from breach_id on,
 * kept apart until the identity's records are all in. */
static int take_record(void *ctx, const bd_record_row *r)
{
    work *wk = ctx;
    if (wk->nrecs == BD_JOB_RECORDS_MAX + 1)
        return 1;
    found_record *f = &wk->recs[wk->nrecs];
    if (wk->nrecs == BD_JOB_RECORDS_MAX) { /* the probe past the cap: counted, not kept */
        wk->nrecs++;
        return 1;
    }
    f->breach = breach_of(&wk->breaches, wk->store, r->breach_id);
    if (!f->breach) {
        wk->err = BD_ERR_STORE;
        return 1;
    }
    f->json_at = wk->rec_json.len;
    bd_json_init(&wk->w, &wk->rec_json); /* a value of its own: no comma before it */
    bd_write_breached_data(&wk->w, r);
    f->json_end = wk->rec_json.len;
    f->csv_at = wk->rec_csv.len;
    bd_result res = bd_job_csv_cell(&wk->rec_csv, (bd_slice){f->breach->uuid, BD_UUID_LEN});
    if (res == BD_OK)
        res = bd_buf_append_char(&wk->rec_csv, ',');
    if (res == BD_OK)
        res = bd_job_csv_cell(&wk->rec_csv, (bd_slice){f->breach->name, strlen(f->breach->name)});
    if (res == BD_OK)
        res = csv_cells(&wk->rec_csv, r);
    f->csv_end = wk->rec_csv.len;
    if (res != BD_OK || bd_json_result(&wk->w) != BD_OK) {
        wk->err = res != BD_OK ? res : BD_ERR_LIMIT;
        return 1;
    }
    wk->nrecs++;
    return 0;
}

/* The order records are written in: grouped by breach, in the order each breach first
 * appears, breach-search's order within a breach. */
static void group(work *wk, int kept)
{
    int n = 0;
    for (int i = 0; i < kept; i++) {
        bool first = true;
        for (int k = 0; k < i && first; k++)
            first = wk->recs[k].breach != wk->recs[i].breach;
        for (int k = i; first && k < kept; k++)
            if (wk->recs[k].breach == wk->recs[i].breach)
                wk->order[n++] = k;
    }
}

/* The JSON Lines object of one identity, its records grouped by breach. */
static void write_line(work *wk, int64_t index, const char *type, bd_slice account,
                       int64_t found, int kept)
{
    bd_json w;
    bd_json_init(&w, &wk->jsonl);
    bd_json_object_begin(&w);
    bd_json_key(&w, "index");
    bd_json_int(&w, index);
    bd_json_key(&w, "type");
    bd_json_cstring(&w, type);
    bd_json_key(&w, "account");
    if (account.ptr)
        bd_json_string(&w, account);
    else
        bd_json_null(&w);
    bd_json_key(&w, "found");
    bd_json_int(&w, found);
    bd_json_key(&w, "breaches");
    bd_json_array_begin(&w);
    for (int i = 0; i < kept; i++) {
        const found_record *f = &wk->recs[wk->order[i]];
        if (i == 0 || wk->recs[wk->order[i - 1]].breach != f->breach) {
            if (i > 0) {
                bd_json_array_end(&w);
                bd_json_object_end(&w);
            }
            bd_json_object_begin(&w);
            bd_json_key(&w, "breach_id");
            bd_json_cstring(&w, f->breach->uuid);
            bd_json_key(&w, "source_name");
            bd_json_cstring(&w, f->breach->name);
            bd_json_key(&w, "records");
            bd_json_array_begin(&w);
        }
        bd_json_raw(&w, (bd_slice){wk->rec_json.data + f->json_at, f->json_end - f->json_at});
    }
    if (kept > 0) {
        bd_json_array_end(&w);
        bd_json_object_end(&w);
    }
    bd_json_array_end(&w);
    bd_json_object_end(&w);
    if (bd_json_result(&w) != BD_OK || bd_buf_append_char(&wk->jsonl, '\n') != BD_OK)
        wk->err = BD_ERR_LIMIT;
}

/* The CSV rows of one identity: one per record, or one with empty record cells. */
static void write_rows(work *wk, int64_t index, const char *type, bd_slice account,
                       int64_t found, int kept)
{
    char head[64];
    for (int i = 0; i < (kept ? kept : 1) && wk->err == BD_OK; i++) {
        snprintf(head, sizeof head, "%lld,%s,", (long long)index, type);
        bd_result r = bd_buf_append_str(&wk->csv, head);
        if (r == BD_OK)
            r = bd_job_csv_cell(&wk->csv, account);
        if (r == BD_OK)
            r = bd_buf_printf(&wk->csv, ",%lld,", (long long)found);
        const found_record *f = kept ? &wk->recs[wk->order[i]] : NULL;
        if (r == BD_OK && f)
            r = bd_buf_append(&wk->csv, wk->rec_csv.data + f->csv_at, f->csv_end - f->csv_at);
        else if (r == BD_OK) /* breach_id .. severity, all empty */
            r = bd_buf_append_str(&wk->csv, ",,,,,,,,,,,,,,");
        if (r == BD_OK)
            r = bd_buf_append_str(&wk->csv, "\r\n");
        if (r != BD_OK)
            wk->err = r;
    }
}

/* Looks up one identity and writes its results. */
static bd_result look_up(work *wk, const bd_job_row *j, int64_t index, bd_slice key)
{
    bd_record_query q;
    memset(&q, 0, sizeof q);
    q.field = (bd_field)j->type;
    q.key = key;
    q.limit = BD_JOB_RECORDS_MAX + 1; /* one past the cap: whether counting is needed */
    wk->nrecs = 0;
    wk->err = BD_OK;
    bd_buf_reset(&wk->rec_json);
    bd_buf_reset(&wk->rec_csv);
    bd_result r = bd_store_record_search(wk->store, &q, take_record, wk, NULL);
    if (r == BD_OK)
        r = wk->err;
    int64_t found = wk->nrecs;
    int kept = wk->nrecs > BD_JOB_RECORDS_MAX ? BD_JOB_RECORDS_MAX : wk->nrecs;
    if (r == BD_OK && wk->nrecs > BD_JOB_RECORDS_MAX) { /* past the cap: count them all */
        bd_record_query cq;
        memset(&cq, 0, sizeof cq);
        cq.field = q.field;
        cq.key = key;
        cq.limit = 1;
        int saved = wk->nrecs;
        wk->nrecs = BD_JOB_RECORDS_MAX + 1; /* the callback keeps nothing more */
        r = bd_store_record_search(wk->store, &cq, take_record, wk, &found);
        wk->nrecs = saved;
    }
    if (r != BD_OK)
        return r;
    const char *type = bd_id_type_name((bd_id_type)j->type);
    bool secret = j->type == BD_FIELD_PASSWORD || j->type == BD_FIELD_SSN;
    bd_slice account = secret ? (bd_slice){NULL, 0} : key;
    group(wk, kept);
    write_line(wk, index, type, account, found, kept);
    write_rows(wk, index, type, account, found, kept);
    return wk->err;
}

/* Looks up every identity of one chunk's packed keys into wk->jsonl and wk->csv; *n gets
 * how many. */
static bd_result run_chunk(work *wk, const bd_job_row *j, int64_t chunk_no, int64_t *n)
{
    bd_buf_reset(&wk->jsonl);
    bd_buf_reset(&wk->csv);
    *n = 0;
    bd_result r = bd_store_read_begin(wk->store);
    const uint8_t *p = (const uint8_t *)wk->inputs.data, *end = p + wk->inputs.len;
    while (r == BD_OK && p < end) {
        size_t len = end - p >= 2 ? (size_t)p[0] | (size_t)p[1] << 8 : SIZE_MAX;
        if (len > (size_t)(end - p) - 2) {
            r = BD_ERR_STORE; /* not what jobs.c packed */
            break;
        }
        r = look_up(wk, j, chunk_no * BD_JOB_CHUNK + *n, (bd_slice){(const char *)p + 2, len});
        p += 2 + len;
        (*n)++;
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
    cache_clear(&wk->breaches);
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
            r = run_chunk(wk, j, chunk_no, &n);
        if (r == BD_OK && rn->pause_ms > 0)
            sleep_ms(rn->pause_ms);
        if (r == BD_OK)
            r = bd_store_job_chunk_done(wk->store, j->uuid, j->lease, chunk_no, n,
                                        (bd_slice){wk->jsonl.data, wk->jsonl.len},
                                        (bd_slice){wk->csv.data, wk->csv.len},
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
    bd_buf_init(&wk->jsonl, TEXT_MAX);
    bd_buf_init(&wk->csv, TEXT_MAX);
    bd_buf_init(&wk->rec_json, TEXT_MAX);
    bd_buf_init(&wk->rec_csv, TEXT_MAX);
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
    cache_clear(&wk->breaches);
    bd_store_close(wk->store);
    bd_buf_free(&wk->inputs);
    bd_buf_free(&wk->jsonl);
    bd_buf_free(&wk->csv);
    bd_buf_free(&wk->rec_json);
    bd_buf_free(&wk->rec_csv);
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
