/* The PostgreSQL lookup dispatcher (store/pg/batch.c): one thread with connections of its
 * own (one per core; all but the first for owner words' pages and data versions alone), in
 * non-blocking mode, that answers for requests that wait without holding an HTTP worker:
 * the email searches a fixed statement answers (no filter, no tenant's scope; a first page
 * or a page after a position), the card BIN pages (a lone 6-digit BIN prefix, newest first,
 * with its count), an owner word's cards in expiry order (one word and one expiry range,
 * with its count), and the data version alone (the catalog's and the status's replies are
 * kept per version). Whatever lookups of one kind are waiting when a connection is free go
 * out as one statement (unnest of the keys WITH ORDINALITY, LATERAL per key: each key's page
 * and count exactly as the synchronous statements give them), so a lone lookup goes out at
 * once and a busy server answers many per round trip.
 *
 * A lookup is the caller's (it lives until its done callback has run, which is the last
 * thing the dispatcher does with it, on the dispatcher's thread). A failure is the store
 * error the synchronous path would have: BD_ERR_BUSY when the server cannot be reached
 * (the dispatcher resets its connection and sends the batch once more first, as a
 * statement outside a transaction is retried), BD_ERR_STORE otherwise; BD_ERR_UNSUPPORTED
 * when the dispatcher found its store routes searches (the caller then searches itself).
 * On a Citus coordinator with direct reads it takes email searches only and reads them on
 * their shards' workers (store/pg/batch_direct.c); one it cannot read there (its worker
 * down, its shard moved) is handed back with BD_ERR_UNSUPPORTED too. */
#ifndef BD_STORE_PG_BATCH_H
#define BD_STORE_PG_BATCH_H

#include <stdbool.h>
#include <stdint.h>

#include "core/result.h"
#include "core/slice.h"
#include "store/store.h"

typedef struct bd_pg_batch bd_pg_batch;
struct bd_pg_rows; /* a batch's result, shared by its lookups */

typedef enum {
    BD_PG_LOOKUP_EMAIL,   /* an email's page of records (email, has_after, after_*) */
    BD_PG_LOOKUP_BIN,     /* a BIN's page of cards, newest first (bin, offset), always counted */
    BD_PG_LOOKUP_OWNER,   /* an owner word's page of cards in expiry order (email: the word,
                           * low, high, offset), always counted */
    BD_PG_LOOKUP_VERSION, /* the data version alone (version), for a reply kept per version:
                           * the lookups waiting when it is sent share one read, made after
                           * each of them was queued, so never older than its request */
} bd_pg_lookup_kind;

typedef struct bd_pg_lookup {
    /* in */
    bd_pg_lookup_kind kind;
    bd_slice email; /* the lookup key (an email, or an owner word), borrowed until done */
    char bin[7];
    bd_slice low, high; /* an owner word's expiry range (NULL ptr: open), borrowed */
    int64_t offset;
    bool has_after; /* a page after (after_date, after_id); else a first page, counted */
    int32_t after_date;
    int64_t after_id;
    int limit;                             /* rows asked for (the page and its probe row) */
    void (*done)(struct bd_pg_lookup *lk); /* on the dispatcher's thread, once */
    void *ctx;
    /* out */
    bd_result result;
    bool has_version; /* the rows' data version (a page with rows) */
    uint64_t version;
    int64_t found; /* a first page's count (0 without rows) */
    struct bd_pg_rows *rows;
    int first, n;              /* this lookup's rows of rows */
    struct bd_pg_lookup *next; /* the dispatcher's queue */
} bd_pg_lookup;

/* Starts the dispatcher on db (a PostgreSQL URI, borrowed for its life); it connects on
 * its thread, and again after a loss. always: a search alone takes it too (see enter). NULL
 * when out of memory or no thread. */
bd_pg_batch *bd_pg_batch_start(const char *db, bool always);
/* Queues lk; false when the dispatcher takes no lookups (draining, or its store routes
 * searches, where the fixed statements name the owner key), or none of lk's kind (on a Citus
 * coordinator with direct reads, all but email searches): the caller searches itself. */
bool bd_pg_batch_submit(bd_pg_batch *b, bd_pg_lookup *lk);
/* Whether submit would take a lookup now. */
bool bd_pg_batch_open(const bd_pg_batch *b);
/* Low load: a search that finds no other of the dispatcher's kind in progress in the
 * process runs on its own thread, synchronously, since a batch of one would only add two
 * thread hand-overs and a costlier statement to it. enter counts the caller's search in
 * (pair it with leave once its statement has answered) and returns true when it is alone
 * (never when the dispatcher was started with always). */
bool bd_pg_batch_enter(bd_pg_batch *b);
void bd_pg_batch_leave(bd_pg_batch *b);
/* Calls cb for each row of a done lookup, in search order, until cb returns non-zero. */
void bd_pg_batch_each(const bd_pg_lookup *lk, bd_record_cb cb, void *ctx);
void bd_pg_batch_each_card(const bd_pg_lookup *lk, bd_card_cb cb, void *ctx);
/* Whether the dispatcher answers q as a BIN lookup: a lone plain 6-digit BIN prefix in
 * createdAt order, newest first. On true, bin holds the BIN. */
bool bd_pg_batch_bin_page(const bd_card_query *q, char bin[7]);
/* Whether the dispatcher answers q as an owner word's page (pg_card_owner_batch_page's
 * shape). On true, word, low and high point into q's conditions. */
bool bd_pg_batch_owner_page(const bd_card_query *q, bd_slice *word, bd_slice *low, bd_slice *high);
/* Gives the lookup's share of its batch's result back (after each; idempotent). */
void bd_pg_batch_release(bd_pg_lookup *lk);
/* Inside a read view on a PostgreSQL store s: the view takes version as the data version of
 * what it read (as a search through s would have noted it). */
void bd_pg_batch_note_version(bd_store *s, uint64_t version);
/* Lookups answered and statements sent so far, and searches that found themselves alone. */
void bd_pg_batch_counts(const bd_pg_batch *b, uint64_t *lookups, uint64_t *batches,
                        uint64_t *alone);
/* Takes no more lookups, and returns once every lookup taken is done. */
void bd_pg_batch_drain(bd_pg_batch *b);
/* Drains, stops the thread, closes the connection, frees. NULL is ignored. */
void bd_pg_batch_stop(bd_pg_batch *b);

#endif
