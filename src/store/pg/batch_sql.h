/* What the lookup dispatcher (batch.c) takes from records_email.c and cards.c: the batched
 * email and BIN pages and the reading of their rows, so that a batched page is the
 * synchronous statements' page byte for byte. */
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

/* BIN pages in createdAt order, newest first, for many BINs in one statement: $1 the BINs,
 * $2 each one's limit, $3 its end of range in card_counts (the BIN with its last digit
 * raised), $4 its offset. Columns 0-13 a card (pg_card_rows), 14 the data version, 15
 * the BIN's count, 16 its ordinal (from 1); text results. A BIN without cards on the page
 * gives one row whose card id is NULL. */
extern const char *const pg_bin_batch_sql;
/* Whether q is a BIN page (a lone plain 6-digit BIN prefix in createdAt order), which
 * card_bins and cards_by_bin_created hold in that order. */
bool pg_card_bin_page(const bd_card_query *q);
/* An owner word's pages in expiry order, oldest first, for many words in one statement: $1
 * the words, $2 each one's limit, $3 its range's low end ('' when open), $4 its high end
 * ('~' when open), $5 its offset. Columns as pg_bin_batch_sql's (15 the word's count within
 * its range). */
extern const char *const pg_owner_batch_sql;
/* Whether q is an owner word's page the batched statement answers as the synchronous one
 * does: "owner:WORD AND expireDate:[LOW TO HIGH]" (one plain lower-case word, one range
 * whose ends are open or inclusive) in expiry order, oldest first. On true, word, low and
 * high point into q's conditions (low or high NULL: open). */
bool pg_card_owner_batch_page(const bd_card_query *q, bd_slice *word, bd_slice *low,
                              bd_slice *high);
/* Calls cb for rows first .. first+n-1 of a text result whose columns 0-13 are a card, until
 * it returns non-zero. */
void pg_card_rows(PGresult *res, int first, int n, bd_card_cb cb, void *ctx);

#endif
