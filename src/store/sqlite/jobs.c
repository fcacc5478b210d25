/* The SQLite backend's bulk jobs (store.h, "bulk lookup jobs"). Every write is one
 * IMMEDIATE transaction of its own, so the file's single writer orders claims (two servers
 * of one file never claim the same job) and a key's limits (a create or a chunk checks them
 * with nothing else written in between). */
#include <sodium.h>
#include <string.h>

#include "store/sqlite/sqlite_impl.h"
#include "store/sqlite/statements.h"

/* Runs body(s, ctx) inside BEGIN IMMEDIATE ... COMMIT, rolling back on failure. */
static bd_result in_tx(sqlite_store *s, bd_result (*body)(sqlite_store *, void *), void *ctx)
{
    bd_result r = sq_run_fixed(s, Q_BEGIN);
    if (r != BD_OK)
        return r;
    r = body(s, ctx);
    if (r == BD_OK)
        r = sq_run_fixed(s, Q_COMMIT);
    if (r != BD_OK && !sqlite3_get_autocommit(s->db))
        sq_run_fixed(s, Q_ROLLBACK);
    return r;
}

static void read_job(sqlite3_stmt *st, bd_job_row *out)
{
    memset(out, 0, sizeof *out);
    bd_slice u = sq_col_slice(st, 0);
    size_t n = u.len < BD_UUID_LEN ? u.len : BD_UUID_LEN;
    if (u.ptr)
        memcpy(out->uuid, u.ptr, n);
    out->uuid[n] = '\0';
    out->key_id = sqlite3_column_int64(st, 1);
    out->type = sqlite3_column_int(st, 2);
    out->status = (bd_job_status)sqlite3_column_int(st, 3);
    out->total = sqlite3_column_int64(st, 4);
    out->done = sqlite3_column_int64(st, 5);
    out->chunks = sqlite3_column_int64(st, 6);
    out->created_at = sqlite3_column_int64(st, 7);
    out->finished_at = sqlite3_column_int64(st, 8);
    out->attempts = sqlite3_column_int64(st, 9);
    out->lease = sqlite3_column_int64(st, 10);
    out->rows = sqlite3_column_int64(st, 11);
    out->truncated = sqlite3_column_int64(st, 12);
}

/* Runs Q_JOB_USAGE or Q_JOB_USAGE_OF (st, bound) into *out. */
static bd_result read_usage(sqlite3_stmt *st, bd_job_usage *out)
{
    int rc = sqlite3_step(st);
    bd_result r = rc == SQLITE_ROW ? BD_OK : rc == SQLITE_DONE ? BD_ERR_STORE : sq_map_rc(rc);
    if (rc == SQLITE_ROW)
        *out = (bd_job_usage){sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
                              sqlite3_column_int64(st, 2), sqlite3_column_int64(st, 3)};
    sq_done(st);
    return r;
}

bd_result sq_job_usage(bd_store *base, int64_t key_id, bd_job_usage *out)
{
    sqlite3_stmt *st = sq_fixed(S(base), Q_JOB_USAGE);
    if (!st)
        return BD_ERR_STORE;
    sqlite3_bind_int64(st, 1, key_id);
    return read_usage(st, out);
}

typedef struct {
    const bd_job_row *j;
    const bd_slice *chunks;
    size_t nchunks;
    const bd_job_limits *lim;
    bd_job_usage *usage;
} create_args;

/* Whether a job of `total` identities fits beside what the key's jobs hold (u). */
static bool fits(const bd_job_limits *lim, const bd_job_usage *u, int64_t total)
{
    return u->jobs + 1 <= lim->max_jobs && u->identities + total <= lim->max_identities &&
           u->rows + u->identities + total <= lim->max_rows;
}

static bd_result create_body(sqlite_store *s, void *ctx)
{
    create_args *a = ctx;
    sqlite3_stmt *st;
    if (a->lim) { /* inside the write transaction: the key's other creates wait for it */
        bd_job_usage u;
        if (!(st = sq_fixed(s, Q_JOB_USAGE)))
            return BD_ERR_STORE;
        sqlite3_bind_int64(st, 1, a->j->key_id);
        bd_result r = read_usage(st, &u);
        if (r != BD_OK)
            return r;
        if (a->usage)
            *a->usage = u;
        if (!fits(a->lim, &u, a->j->total))
            return BD_ERR_LIMIT;
    }
    if (!(st = sq_fixed(s, Q_JOB_PUT)))
        return BD_ERR_STORE;
    sqlite3_bind_text(st, 1, a->j->uuid, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, a->j->key_id);
    sqlite3_bind_int(st, 3, a->j->type);
    sqlite3_bind_int64(st, 4, a->j->total);
    sqlite3_bind_int64(st, 5, (int64_t)a->nchunks);
    sqlite3_bind_int64(st, 6, a->j->created_at);
    bd_result r = sq_step_done(s, st);
    for (size_t i = 0; r == BD_OK && i < a->nchunks; i++) {
        if (!(st = sq_fixed(s, Q_JOB_CHUNK_PUT)))
            return BD_ERR_STORE;
        sqlite3_bind_text(st, 1, a->j->uuid, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 2, (int64_t)i);
        sq_bind_blob(st, 3, a->chunks[i]);
        r = sq_step_done(s, st);
    }
    return r;
}

bd_result sq_job_create(bd_store *base, const bd_job_row *j, const bd_slice *chunks,
                        size_t nchunks, const bd_job_limits *lim, bd_job_usage *usage)
{
    create_args a = {j, chunks, nchunks, lim, usage};
    return in_tx(S(base), create_body, &a);
}

bd_result sq_job_get(bd_store *base, const char *uuid, int64_t key_id, bd_job_row *out)
{
    sqlite3_stmt *st = sq_fixed(S(base), Q_JOB_GET);
    if (!st)
        return BD_ERR_STORE;
    sqlite3_bind_text(st, 1, uuid, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, key_id);
    int rc = sqlite3_step(st);
    bd_result r = rc == SQLITE_ROW ? BD_OK : rc == SQLITE_DONE ? BD_ERR_NOT_FOUND : sq_map_rc(rc);
    if (rc == SQLITE_ROW)
        read_job(st, out);
    sq_done(st);
    return r;
}

typedef struct {
    int64_t now, lease_s;
    bd_job_row *out;
} claim_args;

static bd_result claim_body(sqlite_store *s, void *ctx)
{
    claim_args *a = ctx;
    sqlite3_stmt *st = sq_fixed(s, Q_JOB_CLAIM);
    if (!st)
        return BD_ERR_STORE;
    int64_t token = 0;
    while (token <= 0) { /* positive and non-zero: 0 means never claimed */
        randombytes_buf(&token, sizeof token);
        token &= INT64_MAX;
    }
    sqlite3_bind_int64(st, 1, a->now);
    sqlite3_bind_int64(st, 2, token);
    sqlite3_bind_int64(st, 3, a->lease_s);
    int rc = sqlite3_step(st);
    bd_result r = rc == SQLITE_ROW ? BD_OK : rc == SQLITE_DONE ? BD_ERR_NOT_FOUND : sq_map_rc(rc);
    if (rc == SQLITE_ROW) {
        read_job(st, a->out);
        rc = sqlite3_step(st);
        if (rc != SQLITE_DONE)
            r = sq_map_rc(rc);
    }
    sq_done(st);
    return r;
}

bd_result sq_job_claim(bd_store *base, int64_t now, int64_t lease_s, bd_job_row *out)
{
    claim_args a = {now, lease_s, out};
    return in_tx(S(base), claim_body, &a);
}

bd_result sq_job_yield(bd_store *base, const char *uuid, int64_t lease)
{
    sqlite_store *s = S(base);
    sqlite3_stmt *st = sq_fixed(s, Q_JOB_YIELD);
    if (!st)
        return BD_ERR_STORE;
    sqlite3_bind_text(st, 1, uuid, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, lease);
    bd_result r = sq_step_done(s, st);
    return r == BD_OK && sqlite3_changes(s->db) != 1 ? BD_ERR_BUSY : r;
}

/* The one blob column 1 (col) of st's first row into out; BD_ERR_NOT_FOUND without a row. */
static bd_result read_blob(sqlite3_stmt *st, int col, int64_t *first, bd_buf *out)
{
    bd_buf_reset(out);
    int rc = sqlite3_step(st);
    bd_result r = rc == SQLITE_ROW ? BD_OK : rc == SQLITE_DONE ? BD_ERR_NOT_FOUND : sq_map_rc(rc);
    if (rc == SQLITE_ROW) {
        if (first)
            *first = sqlite3_column_int64(st, 0);
        const void *p = sqlite3_column_blob(st, col);
        r = bd_buf_append(out, p ? p : "", (size_t)sqlite3_column_bytes(st, col));
    }
    sq_done(st);
    return r;
}

bd_result sq_job_next_chunk(bd_store *base, const char *uuid, int64_t from, int64_t *chunk_no,
                            bd_buf *inputs)
{
    sqlite3_stmt *st = sq_fixed(S(base), Q_JOB_NEXT_CHUNK);
    if (!st)
        return BD_ERR_STORE;
    sqlite3_bind_text(st, 1, uuid, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, from);
    return read_blob(st, 1, chunk_no, inputs);
}

typedef struct {
    const char *uuid;
    int64_t lease;
    const bd_job_chunk_out *c;
} done_args;

static bd_result chunk_done_body(sqlite_store *s, void *ctx)
{
    done_args *a = ctx;
    const bd_job_chunk_out *c = a->c;
    sqlite3_stmt *st;
    if (c->max_rows > 0 && c->rows > c->n) { /* rows past the identities' own: still free? */
        bd_job_usage u;
        if (!(st = sq_fixed(s, Q_JOB_USAGE_OF)))
            return BD_ERR_STORE;
        sqlite3_bind_text(st, 1, a->uuid, -1, SQLITE_STATIC);
        bd_result r = read_usage(st, &u);
        if (r != BD_OK)
            return r;
        if (u.rows + u.identities + (c->rows - c->n) > c->max_rows)
            return BD_ERR_LIMIT;
    }
    if (!(st = sq_fixed(s, Q_JOB_PROGRESS)))
        return BD_ERR_STORE;
    sqlite3_bind_text(st, 1, a->uuid, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, a->lease);
    sqlite3_bind_int64(st, 3, c->n);
    sqlite3_bind_int64(st, 4, c->lease_until);
    sqlite3_bind_int64(st, 5, c->rows);
    sqlite3_bind_int64(st, 6, c->truncated);
    bd_result r = sq_step_done(s, st);
    if (r != BD_OK)
        return r;
    if (sqlite3_changes(s->db) != 1)
        return BD_ERR_BUSY; /* taken over */
    if (!(st = sq_fixed(s, Q_JOB_CHUNK_RESULTS)))
        return BD_ERR_STORE;
    sqlite3_bind_text(st, 1, a->uuid, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, c->chunk_no);
    sqlite3_bind_blob(st, 3, c->results.ptr ? c->results.ptr : "", (int)c->results.len,
                      SQLITE_STATIC);
    r = sq_step_done(s, st);
    if (r == BD_OK && sqlite3_changes(s->db) != 1)
        r = BD_ERR_BUSY; /* already stored: counting it again would pass total */
    return r;
}

bd_result sq_job_chunk_done(bd_store *base, const char *uuid, int64_t lease,
                            const bd_job_chunk_out *c)
{
    done_args a = {uuid, lease, c};
    return in_tx(S(base), chunk_done_body, &a);
}

bd_result sq_job_finish(bd_store *base, const char *uuid, int64_t lease, bd_job_status status,
                        int64_t now)
{
    sqlite_store *s = S(base);
    sqlite3_stmt *st = sq_fixed(s, Q_JOB_FINISH);
    if (!st)
        return BD_ERR_STORE;
    sqlite3_bind_text(st, 1, uuid, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, lease);
    sqlite3_bind_int(st, 3, (int)status);
    sqlite3_bind_int64(st, 4, now);
    bd_result r = sq_step_done(s, st);
    return r == BD_OK && sqlite3_changes(s->db) != 1 ? BD_ERR_BUSY : r;
}

bd_result sq_job_result(bd_store *base, const char *uuid, int64_t chunk_no, bd_buf *out)
{
    sqlite3_stmt *st = sq_fixed(S(base), Q_JOB_RESULT);
    if (!st)
        return BD_ERR_STORE;
    sqlite3_bind_text(st, 1, uuid, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, chunk_no);
    return read_blob(st, 0, NULL, out);
}

typedef struct {
    int64_t before, *removed;
} expire_args;

static bd_result expire_body(sqlite_store *s, void *ctx)
{
    expire_args *a = ctx;
    sqlite3_stmt *st = sq_fixed(s, Q_JOB_EXPIRE_CHUNKS);
    if (!st)
        return BD_ERR_STORE;
    sqlite3_bind_int64(st, 1, a->before);
    bd_result r = sq_step_done(s, st);
    if (r != BD_OK)
        return r;
    if (!(st = sq_fixed(s, Q_JOB_EXPIRE)))
        return BD_ERR_STORE;
    sqlite3_bind_int64(st, 1, a->before);
    r = sq_step_done(s, st);
    if (r == BD_OK)
        *a->removed = sqlite3_changes(s->db);
    return r;
}

/* What goes is overwritten in the main file (secure_delete, as erasure does: the identities
 * and results of a job are someone's lookups); the caller empties the log after it
 * (bd_store_truncate_log). The pragma stays on for the connection: its other deletes are
 * jobs' too. */
bd_result sq_job_expire(bd_store *base, int64_t before, int64_t *removed)
{
    expire_args a = {before, removed};
    bd_result r = sq_exec(S(base), "PRAGMA secure_delete=ON");
    return r == BD_OK ? in_tx(S(base), expire_body, &a) : r;
}
