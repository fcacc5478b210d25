/* Bulk jobs on PostgreSQL (store.h, "bulk lookup jobs"). Job writes take no writer lock and
 * bump no data version: they are not catalog or record content, and an import holding the
 * lock for minutes must not stall a job. A claim is one statement whose SKIP LOCKED lets any
 * number of servers of one database claim at once, each job going to one. A key's creates
 * and the chunks that check its limit on rows take a lock of the key's (an advisory lock
 * until commit), so two servers never both take the last of a key's allowance. */
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "store/pg/pg_impl.h"

#define JOB_COLS                                                                                   \
    "uuid, key_id, type, status, total, done, chunks, created_at, finished_at, attempts, lease, "  \
    "result_rows, truncated"

static const pg_stmt JOB_PUT = {
    PG_Q_JOB_PUT, "INSERT INTO jobs(uuid, key_id, type, status, total, chunks, created_at) "
                  "VALUES ($1, $2::bigint, $3::smallint, 0, $4::bigint, $5::bigint, $6::bigint)"};
static const pg_stmt JOB_CHUNK_PUT = {
    PG_Q_JOB_CHUNK_PUT, "INSERT INTO job_chunks(job, chunk, inputs) VALUES ($1, $2::integer, $3)"};
static const pg_stmt JOB_GET = {PG_Q_JOB_GET, "SELECT " JOB_COLS
                                              " FROM jobs WHERE uuid = $1 AND key_id = $2::bigint"};
/* $1 now, $2 the new lease token, $3 the lease in seconds: of the waiting jobs (queued,
 * yielded, or whose runner's lease ran out), the oldest of the key served least recently; a
 * yielded job (running, no lease) is taken back without counting an attempt */
static const pg_stmt JOB_CLAIM = {
    PG_Q_JOB_CLAIM,
    "UPDATE jobs SET status = 1, lease = $2::bigint, lease_until = $1::bigint + $3::bigint, "
    "attempts = attempts + CASE WHEN status = 1 AND lease = 0 THEN 0 ELSE 1 END, "
    "served = (SELECT coalesce(max(served), 0) + 1 FROM jobs) "
    "WHERE uuid = (SELECT uuid FROM jobs j WHERE status = 0 OR "
    "(status = 1 AND lease_until < $1::bigint) ORDER BY "
    "(SELECT max(served) FROM jobs k WHERE k.key_id = j.key_id), created_at, uuid LIMIT 1 "
    "FOR UPDATE SKIP LOCKED) RETURNING " JOB_COLS};
static const pg_stmt JOB_YIELD = {
    PG_Q_JOB_YIELD, "UPDATE jobs SET lease = 0, lease_until = 0 "
                    "WHERE uuid = $1 AND lease = $2::bigint AND status = 1"};
#define JOB_USAGE_COLS                                                                             \
    "SELECT count(*) FILTER (WHERE status IN (0, 1)), "                                           \
    "coalesce(sum(total - done) FILTER (WHERE status IN (0, 1)), 0), "                            \
    "coalesce(sum(result_rows), 0), coalesce(min(created_at), 0) FROM jobs "
static const pg_stmt JOB_USAGE = {PG_Q_JOB_USAGE, JOB_USAGE_COLS "WHERE key_id = $1::bigint"};
static const pg_stmt JOB_USAGE_OF = {
    PG_Q_JOB_USAGE_OF,
    JOB_USAGE_COLS "WHERE key_id = (SELECT key_id FROM jobs WHERE uuid = $1)"};
/* A key's creates and chunks check its limits one at a time: a lock per key until commit
 * (the writer lock's number, 1651664243, is a one-argument key: no clash) */
#define KEY_LOCK "pg_advisory_xact_lock(1651664245, (key_id % 2147483647)::integer)"
static const pg_stmt JOB_LOCK_KEY = {
    PG_Q_JOB_LOCK_KEY, "SELECT " KEY_LOCK " FROM (SELECT $1::bigint AS key_id) k"};
static const pg_stmt JOB_LOCK_KEY_OF = {PG_Q_JOB_LOCK_KEY_OF,
                                        "SELECT " KEY_LOCK " FROM jobs WHERE uuid = $1"};
/* binary results: the chunk number as text (its binary form is its bytes), the inputs.
 * Ordered by the column, not by the text output (an output named chunk would sort "10"
 * before "2"). */
static const pg_stmt JOB_NEXT_CHUNK = {
    PG_Q_JOB_NEXT_CHUNK, "SELECT c.chunk::text AS n, c.inputs FROM job_chunks c WHERE c.job = $1 "
                         "AND c.chunk >= $2::integer AND c.results IS NULL ORDER BY c.chunk "
                         "LIMIT 1"};
static const pg_stmt JOB_PROGRESS = {
    PG_Q_JOB_PROGRESS, "UPDATE jobs SET done = done + $3::bigint, lease_until = $4::bigint, "
                       "result_rows = result_rows + $5::bigint, truncated = truncated + $6::bigint "
                       "WHERE uuid = $1 AND lease = $2::bigint AND status = 1"};
/* the inputs go: nothing reads them once the results are there */
static const pg_stmt JOB_CHUNK_RESULTS = {
    PG_Q_JOB_CHUNK_RESULTS, "UPDATE job_chunks SET results = $3, inputs = ''::bytea WHERE "
                            "job = $1 AND chunk = $2::integer AND results IS NULL"};
static const pg_stmt JOB_FINISH = {
    PG_Q_JOB_FINISH, "UPDATE jobs SET status = $3::smallint, finished_at = $4::bigint "
                     "WHERE uuid = $1 AND lease = $2::bigint AND status = 1"};
static const pg_stmt JOB_RESULT = {
    PG_Q_JOB_RESULT,
    "SELECT results FROM job_chunks WHERE job = $1 AND chunk = $2::integer AND "
    "results IS NOT NULL"};
static const pg_stmt JOB_EXPIRE = {
    PG_Q_JOB_EXPIRE, "WITH gone AS (DELETE FROM jobs WHERE created_at < $1::bigint RETURNING uuid), "
                     "c AS (DELETE FROM job_chunks WHERE job IN (SELECT uuid FROM gone)) "
                     "SELECT count(*) FROM gone"};

/* A transaction of this file's own: no writer lock, no data-version bump (pg_begin takes
 * both). in_tx keeps the run functions from reconnecting in the middle of it. */
static bd_result tx_begin(pg_store *p)
{
    if (p->in_tx || p->in_read)
        return BD_ERR_INVALID;
    bd_result r = pg_exec(p, "BEGIN");
    p->in_tx = r == BD_OK;
    return r;
}

static bd_result tx_end(pg_store *p, bd_result r)
{
    bd_result c = pg_exec(p, r == BD_OK ? "COMMIT" : "ROLLBACK");
    p->in_tx = false;
    return r != BD_OK ? r : c;
}

static void read_job(const PGresult *res, bd_job_row *out)
{
    memset(out, 0, sizeof *out);
    bd_slice u = pg_slice(res, 0, 0);
    size_t n = u.len < BD_UUID_LEN ? u.len : BD_UUID_LEN;
    if (u.ptr)
        memcpy(out->uuid, u.ptr, n);
    out->uuid[n] = '\0';
    out->key_id = pg_int(res, 0, 1);
    out->type = (int)pg_int(res, 0, 2);
    out->status = (bd_job_status)pg_int(res, 0, 3);
    out->total = pg_int(res, 0, 4);
    out->done = pg_int(res, 0, 5);
    out->chunks = pg_int(res, 0, 6);
    out->created_at = pg_int(res, 0, 7);
    out->finished_at = pg_int(res, 0, 8);
    out->attempts = pg_int(res, 0, 9);
    out->lease = pg_int(res, 0, 10);
    out->rows = pg_int(res, 0, 11);
    out->truncated = pg_int(res, 0, 12);
}

/* Runs JOB_USAGE or JOB_USAGE_OF (q) with pp into *out. */
static bd_result read_usage(pg_store *p, const pg_stmt *q, const pg_params *pp, bd_job_usage *out)
{
    PGresult *res;
    bd_result r = pg_run(p, q, pp, &res);
    if (r != BD_OK)
        return r;
    if (PQntuples(res) == 1)
        *out = (bd_job_usage){pg_int(res, 0, 0), pg_int(res, 0, 1), pg_int(res, 0, 2),
                              pg_int(res, 0, 3)};
    else
        r = BD_ERR_STORE;
    PQclear(res);
    return r;
}

bd_result pg_job_usage(bd_store *s, int64_t key_id, bd_job_usage *out)
{
    pg_params pp = {0};
    pg_param_int(&pp, key_id);
    return read_usage(pg_of(s), &JOB_USAGE, &pp, out);
}

/* Whether a job of `total` identities fits beside what the key's jobs hold (u). */
static bool fits(const bd_job_limits *lim, const bd_job_usage *u, int64_t total)
{
    return u->jobs + 1 <= lim->max_jobs && u->identities + total <= lim->max_identities &&
           u->rows + u->identities + total <= lim->max_rows;
}

bd_result pg_job_create(bd_store *s, const bd_job_row *j, const bd_slice *chunks, size_t nchunks,
                        const bd_job_limits *lim, bd_job_usage *usage)
{
    pg_store *p = pg_of(s);
    bd_result r = tx_begin(p);
    if (r != BD_OK)
        return r;
    if (lim) {
        pg_params kp = {0};
        pg_param_int(&kp, j->key_id);
        bd_job_usage u;
        r = pg_run(p, &JOB_LOCK_KEY, &kp, NULL);
        if (r == BD_OK)
            r = read_usage(p, &JOB_USAGE, &kp, &u);
        if (r == BD_OK && usage)
            *usage = u;
        if (r == BD_OK && !fits(lim, &u, j->total))
            r = BD_ERR_LIMIT;
        if (r != BD_OK)
            return tx_end(p, r);
    }
    pg_params pp = {0};
    pg_param_str(&pp, j->uuid);
    pg_param_int(&pp, j->key_id);
    pg_param_int(&pp, j->type);
    pg_param_int(&pp, j->total);
    pg_param_int(&pp, (int64_t)nchunks);
    pg_param_int(&pp, j->created_at);
    r = pg_run(p, &JOB_PUT, &pp, NULL);
    for (size_t i = 0; r == BD_OK && i < nchunks; i++) {
        pg_params cp = {0};
        pg_param_str(&cp, j->uuid);
        pg_param_int(&cp, (int64_t)i);
        pg_param_text(&cp, chunks[i]);
        r = pg_run(p, &JOB_CHUNK_PUT, &cp, NULL);
    }
    return tx_end(p, r);
}

/* Runs a statement returning at most one job row into *out. */
static bd_result one_job(pg_store *p, const pg_stmt *q, const pg_params *pp, bd_job_row *out)
{
    PGresult *res;
    bd_result r = pg_run(p, q, pp, &res);
    if (r != BD_OK)
        return r;
    if (PQntuples(res) == 1)
        read_job(res, out);
    else
        r = BD_ERR_NOT_FOUND;
    PQclear(res);
    return r;
}

bd_result pg_job_get(bd_store *s, const char *uuid, int64_t key_id, bd_job_row *out)
{
    pg_params pp = {0};
    pg_param_str(&pp, uuid);
    pg_param_int(&pp, key_id);
    return one_job(pg_of(s), &JOB_GET, &pp, out);
}

bd_result pg_job_claim(bd_store *s, int64_t now, int64_t lease_s, bd_job_row *out)
{
    int64_t token = 0;
    while (token <= 0) { /* positive and non-zero: 0 means never claimed */
        randombytes_buf(&token, sizeof token);
        token &= INT64_MAX;
    }
    pg_params pp = {0};
    pg_param_int(&pp, now);
    pg_param_int(&pp, token);
    pg_param_int(&pp, lease_s);
    return one_job(pg_of(s), &JOB_CLAIM, &pp, out);
}

/* Runs a statement whose binary result's last column (col) of at most one row is a blob,
 * into out; column 0 as a number into *first when first is not NULL. */
static bd_result one_blob(pg_store *p, const pg_stmt *q, pg_params *pp, int col, int64_t *first,
                          bd_buf *out)
{
    bd_buf_reset(out);
    pp->result_format = 1;
    PGresult *res;
    bd_result r = pg_run(p, q, pp, &res);
    if (r != BD_OK)
        return r;
    if (PQntuples(res) != 1) {
        PQclear(res);
        return BD_ERR_NOT_FOUND;
    }
    if (first) {
        char num[24];
        bd_slice v = pg_slice(res, 0, 0);
        size_t n = v.len < sizeof num - 1 ? v.len : sizeof num - 1;
        memcpy(num, v.ptr ? v.ptr : "", n);
        num[n] = '\0';
        *first = strtoll(num, NULL, 10);
    }
    r = bd_buf_append(out, PQgetvalue(res, 0, col), (size_t)PQgetlength(res, 0, col));
    PQclear(res);
    return r;
}

bd_result pg_job_next_chunk(bd_store *s, const char *uuid, int64_t from, int64_t *chunk_no,
                            bd_buf *inputs)
{
    pg_params pp = {0};
    pg_param_str(&pp, uuid);
    pg_param_int(&pp, from);
    return one_blob(pg_of(s), &JOB_NEXT_CHUNK, &pp, 1, chunk_no, inputs);
}

/* Runs q, which must change exactly one row: BD_ERR_BUSY when it changed none. */
static bd_result change_one(pg_store *p, const pg_stmt *q, const pg_params *pp)
{
    PGresult *res;
    bd_result r = pg_run(p, q, pp, &res);
    if (r != BD_OK)
        return r;
    if (pg_changes(res) != 1)
        r = BD_ERR_BUSY;
    PQclear(res);
    return r;
}

bd_result pg_job_yield(bd_store *s, const char *uuid, int64_t lease)
{
    pg_params pp = {0};
    pg_param_str(&pp, uuid);
    pg_param_int(&pp, lease);
    return change_one(pg_of(s), &JOB_YIELD, &pp);
}

bd_result pg_job_chunk_done(bd_store *s, const char *uuid, int64_t lease,
                            const bd_job_chunk_out *c)
{
    pg_store *p = pg_of(s);
    bd_result r = tx_begin(p);
    if (r != BD_OK)
        return r;
    if (c->max_rows > 0 && c->rows > c->n) { /* rows past the identities' own: still free? */
        pg_params up = {0};
        pg_param_str(&up, uuid);
        bd_job_usage u;
        r = pg_run(p, &JOB_LOCK_KEY_OF, &up, NULL);
        if (r == BD_OK)
            r = read_usage(p, &JOB_USAGE_OF, &up, &u);
        if (r == BD_OK && u.rows + u.identities + (c->rows - c->n) > c->max_rows)
            r = BD_ERR_LIMIT;
        if (r != BD_OK)
            return tx_end(p, r);
    }
    pg_params pp = {0};
    pg_param_str(&pp, uuid);
    pg_param_int(&pp, lease);
    pg_param_int(&pp, c->n);
    pg_param_int(&pp, c->lease_until);
    pg_param_int(&pp, c->rows);
    pg_param_int(&pp, c->truncated);
    r = change_one(p, &JOB_PROGRESS, &pp); /* locks the job's row: the lease holds till commit */
    if (r == BD_OK) {
        pg_params cp = {0};
        pg_param_str(&cp, uuid);
        pg_param_int(&cp, c->chunk_no);
        pg_param_text(&cp, c->results.ptr ? c->results : (bd_slice){"", 0});
        r = change_one(p, &JOB_CHUNK_RESULTS, &cp);
    }
    return tx_end(p, r);
}

bd_result pg_job_finish(bd_store *s, const char *uuid, int64_t lease, bd_job_status status,
                        int64_t now)
{
    pg_params pp = {0};
    pg_param_str(&pp, uuid);
    pg_param_int(&pp, lease);
    pg_param_int(&pp, (int64_t)status);
    pg_param_int(&pp, now);
    return change_one(pg_of(s), &JOB_FINISH, &pp);
}

bd_result pg_job_result(bd_store *s, const char *uuid, int64_t chunk_no, bd_buf *out)
{
    pg_params pp = {0};
    pg_param_str(&pp, uuid);
    pg_param_int(&pp, chunk_no);
    return one_blob(pg_of(s), &JOB_RESULT, &pp, 0, NULL, out);
}

bd_result pg_job_expire(bd_store *s, int64_t before, int64_t *removed)
{
    pg_params pp = {0};
    pg_param_int(&pp, before);
    PGresult *res;
    bd_result r = pg_run(pg_of(s), &JOB_EXPIRE, &pp, &res);
    if (r != BD_OK)
        return r;
    *removed = PQntuples(res) == 1 ? pg_int(res, 0, 0) : 0;
    PQclear(res);
    return r;
}
