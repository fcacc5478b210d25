/* What the lookup dispatcher (batch.c) takes from records_email.c: the batched email pages and
 * the reading of their rows, so that a batched page is the fixed statements' page byte for
 * byte. */
#ifndef BD_STORE_PG_BATCH_SQL_H
#define BD_STORE_PG_BATCH_SQL_H

#include <libpq-fe.h>

#include "store/store.h"

/* Columns 0-15 a record (RECORD_ROW_COLUMNS' order), 16 the data version, 17 a first page's
 * count, 18 the email's ordinal (from 1); binary results. */
extern const char *const pg_email_batch_first_sql;
extern const char *const pg_email_batch_next_sql;
/* Calls cb for rows first .. first+n-1 of a result of RECORD_ROW_COLUMNS (text or binary),
 * until it returns non-zero. */
void pg_record_rows(PGresult *res, int first, int n, bd_record_cb cb, void *ctx);
/* An integer field of a binary result. */
int64_t pg_binary_int(const PGresult *res, int row, int col);

#endif
