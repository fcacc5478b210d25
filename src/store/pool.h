/* One connection policy for the parts that keep a store connection per thread (the shared
 * limits, the usage counters): a pool names a store and how it is opened, hands each calling
 * thread its own connection, opened on the thread's first call and kept for the pool's
 * life, and closes them all when freed. Freeing must come after every thread using the pool
 * stopped (the composition root's stop order sees to it: app/app.c). Safe from any number of
 * threads. */
#ifndef BD_STORE_POOL_H
#define BD_STORE_POOL_H

#include <stddef.h>

#include "core/result.h"
#include "store/store.h"

typedef struct bd_store_pool bd_store_pool;

/* A pool of connections to uri (copied) opened with flags (BD_STORE_READ, BD_STORE_WRITE,
 * BD_STORE_SMALL_WRITES ...). NULL when out of memory. Nothing is opened yet. */
bd_store_pool *bd_store_pool_new(const char *uri, int flags);
/* The calling thread's connection, opened on first use. When it cannot be opened, why says
 * why (never the URI's password) and the next call tries again. */
bd_result bd_store_pool_get(bd_store_pool *p, bd_store **out, char *why, size_t whylen);
/* Closes the calling thread's connection, if it has one (after a failure that may have left
 * it unusable): its next bd_store_pool_get opens a new one. */
void bd_store_pool_drop(bd_store_pool *p);
/* Opens a connection of the pool's kind that is the caller's own (to close), outside the
 * per-thread ones: a check at start, a last write at stop. */
bd_result bd_store_pool_open_once(const bd_store_pool *p, bd_store **out, char *why,
                                  size_t whylen);
/* The store's URI. */
const char *bd_store_pool_uri(const bd_store_pool *p);
/* Closes every connection and frees. NULL is ignored. */
void bd_store_pool_free(bd_store_pool *p);

#endif
