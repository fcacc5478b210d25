/* Running the SQLite backend's statements (statements.c): the fixed ones, whose SQL is in
 * statements.c, prepared on a connection's first use of each and kept; generated SQL from
 * a per-connection cache by its text; stepping, binding and reading columns, and SQLite's
 * result codes as bd_result. Every file of src/store/sqlite/ that runs SQL includes this;
 * it builds on sqlite_impl.h (the connection, the statement ids), which does not include
 * it. */
#ifndef BD_STORE_SQLITE_STATEMENTS_H
#define BD_STORE_SQLITE_STATEMENTS_H

#include <sqlite3.h>
#include <stdint.h>

#include "core/result.h"
#include "core/slice.h"
#include "store/sqlite/sqlite_impl.h"

/* The bd_result of a SQLite result code. */
static inline bd_result sq_map_rc(int rc)
{
    switch (rc) {
    case SQLITE_OK:
    case SQLITE_DONE:
    case SQLITE_ROW:
        return BD_OK;
    case SQLITE_NOMEM:
        return BD_ERR_NOMEM;
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_CANTOPEN:
        return BD_ERR_BUSY;
    case SQLITE_CONSTRAINT:
        return BD_ERR_EXISTS;
    default:
        return BD_ERR_STORE;
    }
}

/* Prepares fixed statement q for s; NULL on failure (logged). */
sqlite3_stmt *sq_prepare_fixed(sqlite_store *s, int q);

/* Returns the reset, unbound fixed statement q, preparing it once. NULL on failure. */
static inline sqlite3_stmt *sq_fixed(sqlite_store *s, int q)
{
    sqlite3_stmt *st = s->fixed[q];
    return st ? st : sq_prepare_fixed(s, q);
}

/* Returns the statement for generated SQL text, from the per-connection cache when this
 * shape of query ran before; evicts the least recently used entry when full. NULL on
 * failure. */
sqlite3_stmt *sq_dynamic(sqlite_store *s, const char *sql);
/* Finalizes every statement s prepared. */
void sq_finalize_all(sqlite_store *s);

/* Resets a statement and clears its bindings, for its next use. */
static inline void sq_done(sqlite3_stmt *st)
{
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
}

/* Binds text, or NULL for a slice without ptr; the slice must outlive the step. */
static inline void sq_bind_slice(sqlite3_stmt *st, int i, bd_slice v)
{
    if (v.ptr)
        sqlite3_bind_text(st, i, v.ptr, (int)v.len, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, i);
}

static inline void sq_bind_blob(sqlite3_stmt *st, int i, bd_slice v)
{
    if (v.ptr)
        sqlite3_bind_blob(st, i, v.ptr, (int)v.len, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, i);
}

/* Binds n, or NULL when n is negative (not known). */
static inline void sq_bind_known(sqlite3_stmt *st, int i, int64_t n)
{
    if (n >= 0)
        sqlite3_bind_int64(st, i, n);
    else
        sqlite3_bind_null(st, i);
}

/* Column i of the current row as a slice ({NULL, 0} for NULL), valid until the next step. */
static inline bd_slice sq_col_slice(sqlite3_stmt *st, int i)
{
    const char *p = (const char *)sqlite3_column_text(st, i);
    if (!p)
        return (bd_slice){NULL, 0};
    return (bd_slice){p, (size_t)sqlite3_column_bytes(st, i)};
}

/* The statement for generated SQL text (sq_dynamic) in *out; BD_ERR_STORE when it fails. */
static inline bd_result sq_run_dynamic(sqlite_store *s, const char *sql, sqlite3_stmt **out)
{
    *out = sq_dynamic(s, sql);
    return *out ? BD_OK : BD_ERR_STORE;
}

/* Runs a statement that returns no rows, then resets it. */
bd_result sq_step_done(sqlite_store *s, sqlite3_stmt *st);
/* Runs fixed statement q, which returns no rows. */
bd_result sq_run_fixed(sqlite_store *s, int q);
/* Runs a statement that returns one number (a count) into *n (0 when it returns no row),
 * then resets it. */
bd_result sq_step_count(sqlite3_stmt *st, int64_t *n);
/* The one number fixed statement q returns; -1 when it fails. */
int64_t sq_count_of(sqlite_store *s, int q);
/* Runs SQL text (several statements allowed) without results. */
bd_result sq_exec(sqlite_store *s, const char *sql);

#endif
