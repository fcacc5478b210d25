/* The card condition-tree SQL writer (cards_sql.c), used by cards.c: turns a bd_card_cond
 * tree into a WHERE clause over "cards c" whose every value is a bound parameter, and binds
 * those values once the statement is prepared. No text from a request becomes SQL.
 *
 * Ownership: a cond_sql appends to the caller's sql and text buffers; the values it binds
 * point into the condition tree and into text, so both must outlive the statement's step. */
#ifndef BD_STORE_SQLITE_CARDS_SQL_H
#define BD_STORE_SQLITE_CARDS_SQL_H

#include <sqlite3.h>

#include "core/buf.h"
#include "store/card_sql.h" /* the columns and number layout every backend shares */
#include "store/store.h"

/* Bound values collected while a condition tree is written as SQL. */
typedef struct {
    enum { BIND_TEXT, BIND_BLOB, BIND_INT } type;
    const void *ptr;
    int len;
    int64_t n;
} bind_value;

#define MAX_BINDS 512

typedef struct {
    bd_buf *sql;
    bd_buf *text; /* strings made for binding (GLOB and MATCH patterns), NUL-separated */
    bind_value binds[MAX_BINDS];
    size_t nbinds;
    bd_result err; /* the first failure; every later write is skipped */
} cond_sql;

/* Starts collecting SQL into sql (appended to) and its bound values in c; text is emptied
 * and receives the strings made for binding. */
void sq_cond_begin(cond_sql *c, bd_buf *sql, bd_buf *text);
/* Appends SQL text. */
void sq_emit(cond_sql *c, const char *text);
/* Appends " WHERE <k>" and collects its values; returns c->err (BD_ERR_LIMIT for a tree
 * too deep or with too many values, or the buffer's error). */
bd_result sq_cond_where(cond_sql *c, const bd_card_cond *k);
/* " AND <table><col> >= ?" and/or " AND ... <= ?" for the bounds of RANGE condition k;
 * table is a prefix such as "c.". */
void sq_range_bounds(cond_sql *c, const char *table, const char *col, const bd_card_cond *k);
/* Binds a copy of the n bytes at p, then suffix when not NULL (kept in c->text). */
void sq_bind_copy(cond_sql *c, const char *p, size_t n, const char *suffix);
/* Binds the collected values to st, the first as parameter number first. */
void sq_bind_all(cond_sql *c, sqlite3_stmt *st, int first);

#endif
