/* Direct reads on a Citus cluster (issue 37): an email search read on the worker that holds
 * the email's shard, from the shard's own table, instead of through the coordinator, which
 * costs every statement a second hop and Citus's planning on two nodes (docs/SCALING.md,
 * "Direct reads"). In the same round trip the worker's copy of Citus's metadata must still
 * place the shard there: a shard that moved is read through the coordinator, never where it
 * was. */
#ifndef BD_STORE_PG_DIRECT_H
#define BD_STORE_PG_DIRECT_H

#include <libpq-fe.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/result.h"

struct pg_store;
struct pg_params;

#define PG_DIRECT_MAX_NODES                                                                        \
    64 /* workers a map holds; shards on more go through the coordinator                           \
        */
typedef struct pg_direct pg_direct;

/* The pages a worker connection reads, each prepared there per shard at its first use, from
 * a template (records_email.c) that direct.c completes with the placement check and the
 * shard's number. */
typedef enum {
    PG_DIRECT_EMAIL_FIRST,
    PG_DIRECT_EMAIL_NEXT,
    PG_DIRECT_BATCH_FIRST, /* the lookup dispatcher's (batch_direct.c) */
    PG_DIRECT_BATCH_NEXT,
    PG_DIRECT__COUNT
} pg_direct_q;

/* Direct reads for a store opened at uri (a coordinator's), whose worker connections use the
 * URI's settings but for the host and port (and a connect timeout of 2 s); sql holds each
 * page's template (kept, not copied). NULL when out of memory. */
pg_direct *pg_direct_new(const char *uri, const char *const sql[PG_DIRECT__COUNT]);
void pg_direct_free(pg_direct *d);

/* Reads page q with pp on the worker that holds the shard of owner key ok, in one statement
 * that also checks there that the shard is still placed on that worker and reads the data
 * version (the template's columns). BD_OK with *res the rows (one row of NULLs when the shard
 * holds no record of the email); anything else means the caller reads through the
 * coordinator (no map, the shard moved, the worker unreachable or failing: that is logged
 * once, and the worker not tried again for 5 s). The shard map comes from the coordinator
 * over p's connection, again every 30 s and after a shard was found moved. */
bd_result pg_direct_run(struct pg_store *p, const uint8_t *ok, size_t ok_len, pg_direct_q q,
                        const struct pg_params *pp, PGresult **res);

/* ---- for the lookup dispatcher (batch_direct.c), on its own store's connections: those
 * to the workers are in non-blocking pipeline mode, the dispatcher polls them ---- */

/* Reads the shard map again when it is stale; the indexes locate gives hold until the next
 * refresh (a round of the dispatcher's refreshes once, before it locates its lookups). */
void pg_direct_refresh(struct pg_store *p);
/* The worker (node) and shard of an email's records in the map as it is; false when it
 * holds none. */
bool pg_direct_locate(struct pg_store *p, const uint8_t *ok, size_t ok_len, int *node_at,
                      int *shard_at);
/* The connection to worker node, opened (synchronously) when it has none; NULL when it cannot
 * be opened or failed lately. */
PGconn *pg_direct_conn(struct pg_store *p, int node);
/* Queues shard's statement q on its worker's connection, preparing it first when that
 * connection has not; text parameters. false: the connection is of no more use. */
bool pg_direct_send(struct pg_store *p, int shard, pg_direct_q q, int nparams,
                    const char *const *values, int result_format);
/* The next result of a pipeline: each statement's results are followed by a NULL, which is
 * skipped; NULL when a second one follows (nothing more will come), the connection is lost,
 * or, in non-blocking mode, nothing more has arrived yet. */
PGresult *pg_direct_next_result(PGconn *c);
/* The worker failed: its connection is closed, that is logged once, and it is not tried
 * again for 5 s. */
void pg_direct_node_failed(struct pg_store *p, int node);
/* A shard was found moved: the map is read again at the next locate. */
void pg_direct_map_stale(struct pg_store *p);

#endif
