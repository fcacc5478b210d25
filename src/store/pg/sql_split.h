/* Splitting a string of SQL statements at its semicolons, for a server that takes one
 * statement per command (DDL on a Citus coordinator's distributed tables). */
#ifndef BD_STORE_PG_SQL_SPLIT_H
#define BD_STORE_PG_SQL_SPLIT_H

#include <stddef.h>

/* The length of the first statement of sql (up to and without its ';', or to the end): a
 * ';' inside a quoted literal ('...', with '' inside), a quoted identifier ("..."), a dollar
 * quote ($tag$...$tag$) or a comment (-- to the line's end, C style) does not end it.
 * *next: where the following statement starts (past the ';'). */
size_t pg_sql_first_statement(const char *sql, const char **next);

#endif
