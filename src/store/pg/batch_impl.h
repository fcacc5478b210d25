/* The lookup dispatcher's parts (store/pg_batch.h): batch.c keeps the queue, the thread
 * and its lanes; batch_flight.c runs one batched statement on one lane (its connection, its
 * arrays of keys, its result handed to the lookups). */
#ifndef BD_STORE_PG_BATCH_IMPL_H
#define BD_STORE_PG_BATCH_IMPL_H

#include <libpq-fe.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "core/buf.h"
#include "store/pg_batch.h"

#define BATCH_MAX 256
/* The statements, each a kind of flight: what a lookup needs is one of them. */
typedef enum {
    FLIGHT_FIRST,
    FLIGHT_NEXT,
    FLIGHT_BIN,
    FLIGHT_OWNER,
    FLIGHT_VERSION,
    FLIGHT_KINDS
} flight_kind;
#define ARRAYS 5 /* a statement's array parameters at most */
/* Connections, each with a statement in flight at most: one per core (PostgreSQL runs a
 * statement on one core, and the heavier batched pages, an owner word's, kept one backend
 * busy while the other core idled), at most LANES_MAX. */
#define LANES_MAX 4

static inline flight_kind kind_of(const bd_pg_lookup *lk)
{
    switch (lk->kind) {
    case BD_PG_LOOKUP_BIN:
        return FLIGHT_BIN;
    case BD_PG_LOOKUP_OWNER:
        return FLIGHT_OWNER;
    case BD_PG_LOOKUP_VERSION:
        return FLIGHT_VERSION;
    default:
        return lk->has_after ? FLIGHT_NEXT : FLIGHT_FIRST;
    }
}

static inline bool cards_flight(flight_kind k)
{
    return k == FLIGHT_BIN || k == FLIGHT_OWNER;
}

/* Whether a statement's result is text (cards and the version: their reading is the
 * synchronous path's) rather than binary (records). */
static inline bool text_flight(flight_kind k)
{
    return cards_flight(k) || k == FLIGHT_VERSION;
}

struct bd_pg_rows {
    PGresult *res;
    atomic_int refs;
};

/* One connection of the dispatcher's and the statement in flight on it. */
typedef struct {
    bd_store *store;
    bool prepared;
    bool inflight;
    bd_pg_lookup *flight[BATCH_MAX];
    int nflight;
    flight_kind kind; /* the statement in flight */
    bool retried;
    PGresult *got; /* the result read, before the end of the statement */
    /* the statement's array parameters: the keys (emails, BINs or owner words), their
     * limits, then the after-position's dates and ids, the BINs' range ends and offsets, or
     * the owner words' expiry ranges' ends and offsets */
    bd_buf arr[ARRAYS];
} lane;

struct bd_pg_batch {
    const char *db;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t idle_cv; /* signalled when nothing is queued or in flight */
    int efd;
    bool sleeping; /* the thread is (about to be) in poll with a lane free: wake it */
    bool draining, stopping;
    bool refuse; /* the store routes searches: lookups are refused */
    bool direct; /* ... and reads email pages on the workers: only those are taken */
    bd_pg_lookup *head, *tail;
    int busy; /* lookups taken by the thread, not yet done */
    atomic_uint_fast64_t lookups, batches, alone;
    atomic_int active; /* searches between enter and leave */
    bool always;       /* a search alone is dispatched too */
    /* the thread's own */
    bool warned;
    int nlanes;
    lane lanes[LANES_MAX];
};

/* Finishes a lookup (its done callback, the last touch) and counts it out (batch.c). */
void pg_batch_finish_lookup(bd_pg_batch *b, bd_pg_lookup *lk);
/* Fails every lookup in the lane's flight with r and empties it (batch.c). */
void pg_batch_fail_flight(bd_pg_batch *b, lane *l, bd_result r);

/* The lane's connection, opened or reset, set up and with the statements prepared;
 * BD_ERR_UNSUPPORTED (and the dispatcher refusing lookups from now on) where the store
 * routes searches. */
bd_result pg_batch_connect(bd_pg_batch *b, lane *l);
/* Sends the statement of the lane's lookups in flight. */
bd_result pg_batch_send(bd_pg_batch *b, lane *l);
/* Reads what the server sent on the lane and, once the statement is over, hands its rows
 * to the lookups and finishes them (a lost connection: the statement is sent once more on a
 * new one). True while the statement (or its retry) is in flight. */
bool pg_batch_read(bd_pg_batch *b, lane *l);
/* The statement's outcome when its connection is gone without a result; as pg_batch_read. */
bool pg_batch_lost(bd_pg_batch *b, lane *l);
/* Hands a batched statement's result to its n lookups, in ordinal order (each its rows, its
 * count and the data version; a row's ordinal is column 18, binary, for records, 16, text,
 * for cards), and finishes them. */
void pg_batch_hand_rows(bd_pg_batch *b, bd_pg_lookup **lks, int n, bool cards, PGresult *res);
/* The dispatcher on a Citus coordinator with direct reads (batch_direct.c): email lookups
 * read on their shards' workers, every other lookup handed back; until stopping. */
void pg_batch_direct_loop(bd_pg_batch *b);
/* Empties the eventfd that woke the thread (batch.c). */
void pg_batch_woken(bd_pg_batch *b);
/* Appends a text element to an array literal, after sep. */
bd_result pg_batch_add_text(bd_buf *a, const char *sep, bd_slice v);
/* Drops one reference to a batch's result; the last frees it. NULL is ignored. */
void pg_batch_rows_release(struct bd_pg_rows *r);

#endif
