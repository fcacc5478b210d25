/* Bulk jobs under the v7 base path: POST {base}/jobs takes up to 100,000 identities of one
 * type and answers 202 with the job; GET {base}/jobs/{id} reports its status and progress;
 * GET {base}/jobs/{id}/results streams its results as JSON Lines or CSV, a slice at a time
 * from the store. The job runs in jobs/runner.c. A job is its key's: another key's job
 * is a 404, like one that does not exist.
 *
 * What a job costs (docs/API.md, "Bulk jobs"): against the key's monthly quota, a request
 * per result row (its identities' first rows here, the rest as the runner stores them);
 * against its hourly limit, a request per 1,000 identities here and per 1,000 result rows at
 * each download. Its limits (auth/keys.h) bound its jobs waiting, their identities and the
 * rows its jobs keep. */
#include <microhttpd.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "v7/handlers.h"
#include "auth/lookup_log.h"
#include "auth/scope.h"
#include "core/log.h"
#include "core/uuid.h"
#include "v7/job_input.h"
#include "v7/job_results.h"
#include "jobs/runner.h"
#include "http/scope.h"
#include "http/server_impl.h"

#define JOB_TTL_S (24 * 3600) /* a job and its results are deleted a day after submission */
#define ROWS_PER_REQUEST 1000 /* the hourly limit counts a job's identities and its results'
                               * rows by the thousand: a breach-search page holds 1,000 */
#define LIMIT_RETRY_S 5       /* a key at its limit of jobs or identities waiting: a turn or
                               * two of the runner, which takes 200 ms a job */
#define PACKED_MAX (64u << 20)
#define RESULT_CHUNK_MAX (256u << 20)

/* ---- POST {base}/jobs ------------------------------------------------------------------- */

/* A submission being read: each identity's lookup key is packed as a 2-byte little-endian
 * length and its bytes (jobs/runner.h reads them back), a chunk per BD_JOB_CHUNK. */
typedef struct {
    const uint8_t *secret;
    const char *type_text; /* filled by bd_job_input_read before the first identity */
    bool typed;
    bd_id_type type;
    bd_buf packed;
    size_t starts[BD_JOB_MAX_IDENTITIES / BD_JOB_CHUNK + 1]; /* each chunk's first byte */
    size_t nchunks;
    size_t count; /* identities packed */
    char why[200];
} submission;

static const char TYPE_LIST[] =
    "'type' must be one of email, email_domain, phone_number (phonenumber), username, "
    "ip_address (ipaddress), social_security_number, password, password_hash, "
    "bitcoin_address, website_domain";

static int take_identity(void *ctx, size_t index, bd_slice v)
{
    submission *s = ctx;
    if (!s->typed) {
        bd_slice t = {s->type_text, strlen(s->type_text)};
        if (!bd_id_type_parse(t, &s->type)) {
            snprintf(s->why, sizeof s->why, "%s", TYPE_LIST);
            return 1;
        }
        s->typed = true;
    }
    bd_lookup_key k;
    const char *why;
    if (bd_lookup_key_make(s->secret, s->type, v, &k, &why) != BD_OK) {
        snprintf(s->why, sizeof s->why, "identity %zu (counted from 0): %s", index,
                 why ? why : "not a valid value");
        return 1;
    }
    if (index % BD_JOB_CHUNK == 0)
        s->starts[s->nchunks++] = s->packed.len;
    uint8_t len[2] = {(uint8_t)(k.key.len & 0xff), (uint8_t)(k.key.len >> 8)};
    bd_result r = bd_buf_append(&s->packed, len, 2);
    if (r == BD_OK)
        r = bd_buf_append(&s->packed, k.key.ptr, k.key.len);
    sodium_memzero(&k, sizeof k); /* may hold a password's normalised text */
    s->count++;
    if (r != BD_OK) {
        snprintf(s->why, sizeof s->why, "the identities take too much memory");
        return 1;
    }
    return 0;
}

/* Logs every identity of a stored job in the lookup log, a chunk per transaction, straight
 * to the store (a job holds more than the log's buffer). A failure is said, not the job's. */
static void log_lookups(bd_server *srv, bd_req *rq, bd_store *writer, const bd_job_row *j,
                        const bd_slice *chunks, size_t nchunks)
{
    if (!srv->lookups)
        return;
    bd_slice keys[BD_JOB_CHUNK];
    bd_result r = BD_OK;
    for (size_t c = 0; c < nchunks && r == BD_OK; c++) {
        const uint8_t *p = (const uint8_t *)chunks[c].ptr, *end = p + chunks[c].len;
        size_t n = 0;
        while (end - p >= 2 && n < BD_JOB_CHUNK) {
            size_t len = (size_t)p[0] | (size_t)p[1] << 8;
            if (len > (size_t)(end - p) - 2)
                break;
            keys[n++] = (bd_slice){(const char *)p + 2, len};
            p += 2 + len;
        }
        r = bd_lookup_log_write_many(writer, rq->secret, j->created_at, j->key_id, j->type, keys,
                                     n);
    }
    if (r != BD_OK)
        bd_log_for_request(BD_LOG_WARN, "lookups", rq->request_id,
                           "the job's identities could not be written to the lookup log (%s)",
                           bd_result_str(r));
}

static const char *status_name(bd_job_status s)
{
    static const char *const names[] = {"queued", "running", "done", "failed"};
    return s <= BD_JOB_FAILED ? names[s] : "failed";
}

/* The job's JSON: what GET {base}/jobs/{id} answers and POST's 202 holds. */
static void write_job(const bd_server *srv, bd_req *rq, const bd_job_row *j, int status)
{
    bd_reply_begin(rq, status);
    bd_json *w = &rq->json;
    char url[256];
    bd_json_object_begin(w);
    bd_json_key(w, "id");
    bd_json_cstring(w, j->uuid);
    bd_json_key(w, "status");
    bd_json_cstring(w, status_name(j->status));
    bd_json_key(w, "type");
    bd_json_cstring(w, bd_id_type_name((bd_id_type)j->type));
    bd_json_key(w, "total");
    bd_json_int(w, j->total);
    bd_json_key(w, "done");
    bd_json_int(w, j->done);
    bd_json_key(w, "result_rows");
    bd_json_int(w, j->rows);
    bd_json_key(w, "truncated");
    bd_json_int(w, j->truncated);
    bd_json_utc_member(w, "created_at", j->created_at);
    bd_json_utc_member(w, "finished_at", j->finished_at);
    bd_json_utc_member(w, "expires_at", j->created_at + JOB_TTL_S);
    snprintf(url, sizeof url, "%s/jobs/%s", srv->base, j->uuid);
    bd_json_key(w, "url");
    bd_json_cstring(w, url);
    snprintf(url, sizeof url, "%s/jobs/%s/results", srv->base, j->uuid);
    bd_json_key(w, "results_url");
    bd_json_cstring(w, url);
    bd_json_object_end(w);
    bd_reply_finish(rq);
}

/* Takes what n rows (identities, or a job's result rows) cost of the key's hourly limit: a
 * request per ROWS_PER_REQUEST (begun), at most the key's whole limit; the request itself
 * took one when it authenticated. false (429 written) when the limit does not hold them
 * now: then nothing more is taken. */
static bool take_hourly(bd_server *srv, bd_req *rq, int64_t n, const char *what)
{
    int64_t cost = (n + ROWS_PER_REQUEST - 1) / ROWS_PER_REQUEST;
    if (cost > rq->key.rate_per_hour)
        cost = rq->key.rate_per_hour;
    if (cost <= 1)
        return true;
    bd_rate_decision d;
    bd_limiter_take_many(srv->limiter, BD_BUDGET_REQUESTS, rq->key.id, rq->key.rate_per_hour,
                         3600, rq->now_us, cost - 1, &d);
    rq->rate_limit = d.limit;
    rq->rate_remaining = d.remaining;
    rq->rate_reset = d.reset;
    if (d.allowed)
        return true;
    bd_metrics_rate_limited(srv->metrics, BD_LIMIT_KEY_BUDGET);
    rq->retry_after = d.retry_after;
    bd_reply_error(rq, 429, "rate_limited",
                   "this key's limit of %lld requests per hour counts %s by the thousand: "
                   "%lld requests for these, more than it holds now; retry in %lld seconds",
                   (long long)d.limit, what, (long long)cost, (long long)d.retry_after);
    return false;
}

/* Whether a job of n identities fits the key's limits beside what its jobs hold (u); when
 * not, the refusal is written: 413 for a job that never could, 429 for one that can once
 * the key's jobs move on. */
static bool within_limits(bd_req *rq, const bd_job_usage *u, int64_t n)
{
    const bd_job_limits *lim = &rq->key.jobs;
    if (n > lim->max_identities || n > lim->max_rows) {
        int64_t most = lim->max_identities < lim->max_rows ? lim->max_identities : lim->max_rows;
        bd_reply_error(rq, 413, "too_many_identities",
                       "this key's jobs may hold at most %lld identities (its limits); send "
                       "them in jobs of at most that many",
                       (long long)most);
        return false;
    }
    if (u->jobs + 1 > lim->max_jobs) {
        rq->retry_after = LIMIT_RETRY_S;
        bd_reply_error(rq, 429, "too_many_jobs",
                       "this key may have at most %lld jobs queued or running at once, and has "
                       "%lld; submit this one when one of them is done",
                       (long long)lim->max_jobs, (long long)u->jobs);
        return false;
    }
    if (u->identities + n > lim->max_identities) {
        rq->retry_after = LIMIT_RETRY_S;
        bd_reply_error(rq, 429, "too_many_queued_identities",
                       "this key's jobs may hold at most %lld identities not yet looked up, and "
                       "hold %lld: this job's %lld would pass that; submit it when they are done",
                       (long long)lim->max_identities, (long long)u->identities, (long long)n);
        return false;
    }
    if (u->rows + u->identities + n > lim->max_rows) {
        int64_t wait = u->oldest + JOB_TTL_S - rq->now_us / 1000000;
        rq->retry_after = wait > 1 ? wait : 1;
        bd_reply_error(rq, 429, "result_rows_exhausted",
                       "this key's jobs may keep at most %lld result rows, and keep %lld (%lld "
                       "more are held for identities not yet looked up): this job's %lld "
                       "identities need a row each; rows go when their jobs are deleted, a day "
                       "after they were submitted",
                       (long long)lim->max_rows, (long long)u->rows, (long long)u->identities,
                       (long long)n);
        return false;
    }
    return true;
}

/* Counts the job's identities against the key's monthly quota: the POST itself was counted
 * as one request when it authenticated, so n - 1 more. false (403 written) when they would
 * pass the quota: then nothing is counted beyond the POST. */
static bool take_identities(bd_req *rq, int64_t n)
{
    int64_t month;
    if (bd_usage_take_many(rq->usage, rq->key.id, rq->key.quota_per_month, rq->now_us, n - 1,
                           &month))
        return true;
    rq->quota_reset = bd_usage_month_end(rq->now_us / 1000000);
    char when[21];
    bd_utc_text(rq->quota_reset, when);
    bd_reply_error(rq, 403, "quota_exhausted",
                   "a job counts one request per identity: %lld identities would pass this "
                   "key's quota of %lld requests a month (%lld used); it resets at %s",
                   (long long)n, (long long)rq->key.quota_per_month, (long long)month, when);
    return false;
}

/* Reads the body into s; false when refused (reply written). */
static bool read_submission(bd_req *rq, submission *s, char *type_text)
{
    bd_slice body, type = {NULL, 0};
    if (!bd_req_body(rq, &body))
        return false;
    bd_job_input_format fmt;
    const char *ct = MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, "Content-Type");
    if (!bd_job_input_format_of(ct, &fmt)) {
        bd_reply_error(rq, 415, "unsupported_media_type",
                       "send the identities as application/json, text/csv or text/plain");
        return false;
    }
    bd_param_opt(rq, "type", &type);
    s->type_text = type_text;
    size_t n = 0;
    char why[200] = "";
    bd_result r = bd_job_input_read(body, fmt, type, type_text, take_identity, s, &n, why,
                                    sizeof why);
    if (r == BD_ERR_LIMIT) {
        bd_reply_error(rq, 413, "too_many_identities", "a job takes at most %d identities",
                       BD_JOB_MAX_IDENTITIES);
        return false;
    }
    if (r == BD_OK && n == 0)
        snprintf(why, sizeof why, "the job holds no identities"), r = BD_ERR_INVALID;
    if (r == BD_OK && !s->typed) /* unreachable: n > 0 parsed the type */
        snprintf(why, sizeof why, "%s", TYPE_LIST), r = BD_ERR_INVALID;
    if (r != BD_OK) {
        bd_reply_error(rq, r == BD_ERR_NOMEM ? 500 : 422,
                       r == BD_ERR_NOMEM ? "internal_error" : "validation_error", "%s",
                       s->why[0] ? s->why : why[0] ? why : "the body could not be read");
        return false;
    }
    return true;
}

void bd_handle_job_submit(bd_server *srv, bd_req *rq, bd_slice arg)
{
    (void)arg;
    static const char *const params[] = {"type", NULL};
    if (!bd_params_check(rq, params, NULL))
        return;
    submission *s = calloc(1, sizeof *s);
    if (!s) {
        bd_reply_error(rq, 503, "unavailable", "out of memory; retry later");
        return;
    }
    s->secret = rq->secret;
    bd_buf_init(&s->packed, PACKED_MAX);
    char type_text[BD_JOB_TYPE_MAX];
    bd_store *writer = NULL;
    if (!read_submission(rq, s, type_text))
        goto out;
    /* a job has one type: one the key was not given refuses it whole, before anything is
     * counted (a tenant key's lines out of its domains come back out_of_scope: runner.c) */
    if (!bd_scope_type_allowed(rq->key.types, (int)s->type)) {
        bd_scope_refuse(srv, rq, BD_SCOPE_TYPE_NOT_ALLOWED);
        goto out;
    }
    if (!(writer = bd_req_writer(rq)))
        goto out;
    bd_job_row j = {.key_id = rq->key.id, .type = (int)s->type,
                    .created_at = rq->now_us / 1000000, .status = BD_JOB_QUEUED};
    j.total = (int64_t)s->count;
    uint8_t rnd[16];
    randombytes_buf(rnd, sizeof rnd);
    bd_uuid_from_bytes(rnd, j.uuid);
    bd_job_usage u;
    bd_result r = bd_store_job_usage(writer, rq->key.id, &u);
    if (r != BD_OK) {
        bd_reply_store_error(rq, r);
        goto out;
    }
    if (!within_limits(rq, &u, j.total) || !take_hourly(srv, rq, j.total, "a job's identities") ||
        !take_identities(rq, j.total))
        goto out;
    bd_slice chunks[BD_JOB_MAX_IDENTITIES / BD_JOB_CHUNK + 1];
    for (size_t i = 0; i < s->nchunks; i++) {
        size_t end = i + 1 < s->nchunks ? s->starts[i + 1] : s->packed.len;
        chunks[i] = (bd_slice){s->packed.data + s->starts[i], end - s->starts[i]};
    }
    /* the limits again, in the store's transaction: another submission of the key's may have
     * come between (then its identities stay counted: a quota is never undercounted) */
    r = bd_store_job_create(writer, &j, chunks, s->nchunks, &rq->key.jobs, &u);
    if (r == BD_ERR_LIMIT) {
        if (within_limits(rq, &u, j.total)) /* the store and this file disagree: never so */
            bd_reply_error(rq, 503, "unavailable", "the job could not be stored; retry later");
        goto out;
    }
    if (r != BD_OK) { /* the identities stay counted: a quota is never undercounted */
        bd_reply_store_error(rq, r);
        goto out;
    }
    log_lookups(srv, rq, writer, &j, chunks, s->nchunks);
    bd_job_runner_poke(srv->runner);
    snprintf(rq->location, sizeof rq->location, "%s/jobs/%s", srv->base, j.uuid);
    write_job(srv, rq, &j, 202);
out:
    sodium_memzero(s->packed.data, s->packed.len); /* keyed hashes of passwords, maybe */
    bd_buf_free(&s->packed);
    free(s);
}

/* ---- GET {base}/jobs/{id} --------------------------------------------------------------- */

/* The key's job id into *j; false when refused (404 or a store error written). */
static bool find_job(bd_req *rq, bd_slice id, bd_job_row *j)
{
    char uuid[BD_UUID_LEN + 1];
    if (!bd_uuid_canonical(id, uuid)) {
        bd_reply_error(rq, 404, "not_found", "no such job");
        return false;
    }
    /* the thread's write connection: the readers share read views a few milliseconds old
     * (bd_store_share_reads), in which a job submitted just now may not be there yet */
    bd_store *s = bd_req_writer(rq);
    if (!s)
        return false;
    bd_result r = bd_store_read_begin(s);
    if (r == BD_OK)
        r = bd_store_job_get(s, uuid, rq->key.id, j);
    bd_store_read_end(s);
    if (r == BD_ERR_NOT_FOUND) {
        bd_reply_error(rq, 404, "not_found", "no such job (jobs are deleted a day after they "
                                             "were submitted)");
        return false;
    }
    if (r != BD_OK) {
        bd_reply_store_error(rq, r);
        return false;
    }
    return true;
}

void bd_handle_job_get(bd_server *srv, bd_req *rq, bd_slice id)
{
    if (!bd_params_check(rq, (const char *const[]){NULL}, NULL))
        return;
    bd_job_row j;
    if (find_job(rq, id, &j))
        write_job(srv, rq, &j, 200);
}

/* ---- GET {base}/jobs/{id}/results ------------------------------------------------------- */

/* The results being sent: a slice at a time (v7/job_results.h), rendered from the stored
 * record ids of its chunk with the records read by id, through the worker's write connection
 * as the connection drains (libmicrohttpd calls back on the thread that owns the
 * connection). What a download holds is one chunk's stored ids and one slice's text. */
typedef struct {
    bd_store *store;
    char uuid[BD_UUID_LEN + 1];
    int type;
    int64_t chunks, next; /* next: the chunk after the one being rendered */
    size_t count, at;     /* the chunk's identities, and the next to render */
    bool csv, header_sent;
    bd_job_render *render;
    bd_buf stored, text;
    size_t off;
} result_stream;

/* Renders the next slice into st->text, reading the next chunk first when the one in hand
 * is all sent. */
static bd_result next_slice(result_stream *st)
{
    bd_buf_reset(&st->text);
    bd_result r = bd_store_read_begin(st->store);
    if (r == BD_OK && st->at == st->count) {
        r = bd_store_job_result(st->store, st->uuid, st->next, &st->stored);
        if (r == BD_OK)
            r = bd_job_render_open(st->render, (bd_slice){st->stored.data, st->stored.len},
                                   &st->count);
        st->at = 0;
        st->next++;
    }
    if (r == BD_OK && st->at < st->count)
        r = bd_job_render_slice(st->render, st->store, st->type, (st->next - 1) * BD_JOB_CHUNK,
                                st->at, st->csv, &st->text, &st->at);
    bd_store_read_end(st->store);
    return r;
}

static int64_t stream_read(void *ctx, char *buf, size_t max)
{
    result_stream *st = ctx;
    while (st->off == st->text.len) {
        st->off = 0;
        if (st->csv && !st->header_sent) {
            st->header_sent = true;
            bd_buf_reset(&st->text);
            if (bd_buf_append_str(&st->text, bd_job_csv_header()) != BD_OK)
                return -1;
            continue;
        }
        if (st->next == st->chunks && st->at == st->count)
            return 0;
        bd_result r = next_slice(st);
        if (r != BD_OK) {
            bd_log(BD_LOG_ERROR, "jobs", "job results: a chunk could not be written (%s)",
                   bd_result_str(r));
            return -1;
        }
    }
    size_t n = st->text.len - st->off < max ? st->text.len - st->off : max;
    memcpy(buf, st->text.data + st->off, n);
    st->off += n;
    return (int64_t)n;
}

static void stream_free(void *ctx)
{
    result_stream *st = ctx;
    bd_job_render_free(st->render);
    bd_buf_free(&st->stored);
    bd_buf_free(&st->text);
    free(st);
}

/* Whether the client asks for CSV: text/csv in Accept (else JSON Lines). */
static bool wants_csv(bd_req *rq)
{
    const char *accept = MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, "Accept");
    return accept && strstr(accept, "text/csv") != NULL;
}

void bd_handle_job_results(bd_server *srv, bd_req *rq, bd_slice id)
{
    if (!bd_params_check(rq, (const char *const[]){NULL}, NULL))
        return;
    bd_job_row j;
    if (!find_job(rq, id, &j))
        return;
    if (j.status != BD_JOB_DONE) {
        rq->retry_after = j.status == BD_JOB_FAILED ? 0 : 1;
        bd_reply_error(rq, 409, j.status == BD_JOB_FAILED ? "job_failed" : "job_not_finished",
                       j.status == BD_JOB_FAILED
                           ? "this job failed; its results are not available"
                           : "this job has not finished; its status is at its url");
        return;
    }
    if (!take_hourly(srv, rq, j.rows, "a job's result rows"))
        return;
    result_stream *st = calloc(1, sizeof *st);
    bd_job_render *render = st ? bd_job_render_new() : NULL;
    if (!render) {
        free(st);
        bd_reply_error(rq, 503, "unavailable", "out of memory; retry later");
        return;
    }
    st->store = bd_req_writer(rq); /* opened by find_job; as fresh as it */
    st->render = render;
    st->type = j.type;
    bd_buf_init(&st->stored, RESULT_CHUNK_MAX);
    memcpy(st->uuid, j.uuid, sizeof st->uuid);
    st->chunks = j.chunks;
    st->csv = wants_csv(rq);
    bd_buf_init(&st->text, RESULT_CHUNK_MAX);
    bd_reply_begin(rq, 200);
    rq->content_type = st->csv ? "text/csv; charset=utf-8" : "application/x-ndjson";
    rq->stream = (bd_stream){stream_read, stream_free, st};
}
