/* A search that waits for the PostgreSQL lookup dispatcher (store/pg_batch.h) with its
 * connection suspended: what the email search (v7/search.c) and the card BIN page
 * (v7/cards.c) share of it. Each search's deferral begins with a bd_pg_wait, and adds what
 * its reply needs on resumption. */
#ifndef BD_V7_PG_WAIT_H
#define BD_V7_PG_WAIT_H

#include <stdbool.h>
#include <stddef.h>

#include "http/request.h"
#include "store/pg_batch.h"

struct bd_server;

typedef struct {
    bd_deferred base; /* first: server.c's bd_deferred * is the bd_pg_wait * */
    bd_pg_lookup lk;
    struct bd_pg_batch *batch;
} bd_pg_wait;

typedef enum {
    BD_PG_HERE,  /* searched on this thread, as always */
    BD_PG_ALONE, /* the dispatcher's kind, but no other in progress: on this thread too, then
                  * bd_pg_wait_alone_end */
    BD_PG_WAIT,  /* to be deferred: bd_pg_wait_init, then rq->deferred */
} bd_pg_route;

/* Where a search runs that the dispatcher would take (takes: it is of the dispatcher's
 * kind): BD_PG_WAIT with *b set when the request can wait, the dispatcher takes lookups and
 * others are in progress; the deferral then comes from bd_pg_wait_new. */
bd_pg_route bd_pg_wait_route(struct bd_server *srv, const bd_req *rq, bool takes,
                             struct bd_pg_batch **b);
/* After BD_PG_WAIT: a zeroed deferral of size bytes (its first member a bd_pg_wait), or
 * NULL when out of memory, the dispatcher left already (the search then runs here). */
void *bd_pg_wait_new(struct bd_pg_batch *b, size_t size);
/* After a BD_PG_ALONE search. */
void bd_pg_wait_alone_end(struct bd_server *srv);
/* Sets w up to wait on b and makes it the request's deferral: its start submits the lookup
 * (a refused lookup is searched on the request's thread: bd_pg_wait_lookup says so) and the
 * lookup's end resumes the connection; finish and release (the deferral's free) are the
 * search's, release calling bd_pg_wait_end. The caller fills w->lk's key, limit and
 * position. */
void bd_pg_wait_init(bd_pg_wait *w, bd_req *rq, struct bd_pg_batch *b,
                     void (*finish)(bd_deferred *d, void *rq), void (*release)(bd_deferred *d));
/* In finish: the lookup whose page to write, or NULL when the dispatcher refused it and the
 * search is to run on the request's thread. */
bd_pg_lookup *bd_pg_wait_lookup(bd_pg_wait *w);
/* In free: gives the lookup's rows back and leaves the dispatcher. */
void bd_pg_wait_end(bd_pg_wait *w);

#endif
