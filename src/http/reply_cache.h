/* A worker's copy of a finished reply that stays right until the store's data version
 * moves: the whole catalog is one such reply, the same bytes for every key, so it is built
 * once per data version and sent as it is (with its ETag and gzip body made once too)
 * instead of being read and written out per request.
 *
 * Ownership: a bd_reply_cache belongs to one worker thread; a request that is sent from it
 * borrows its bytes until the reply is queued (libmicrohttpd copies them). */
#ifndef BD_HTTP_REPLY_CACHE_H
#define BD_HTTP_REPLY_CACHE_H

#include <stdbool.h>
#include <stdint.h>

#include "core/buf.h"
#include "http/etag.h"

typedef struct bd_cached_reply {
    bd_buf body; /* the 200's JSON */
    bd_buf gz;   /* the same, gzip-coded; empty when not worth it or not made */
    char etag[BD_ETAG_LEN + 1];
    int64_t records; /* the items it holds, for the access log */
} bd_cached_reply;

typedef struct bd_reply_cache bd_reply_cache;

/* NULL when out of memory: the server then builds every reply afresh. */
bd_reply_cache *bd_reply_cache_new(void);
void bd_reply_cache_free(bd_reply_cache *c);

/* The reply kept for (version, variant), or NULL when there is none: variant tells apart
 * replies of one resource (the catalog's number_of_records). */
const bd_cached_reply *bd_reply_cache_get(const bd_reply_cache *c, int64_t version, int64_t variant);

struct bd_gzip;
/* Keeps body as the reply for (version, variant), replacing what was kept; g (NULL: no
 * gzip body) compresses it once. NULL when it could not be kept (too large, out of
 * memory): the caller sends its own bytes. */
const bd_cached_reply *bd_reply_cache_put(bd_reply_cache *c, int64_t version, int64_t variant,
                                          bd_slice body, int64_t records, struct bd_gzip *g);

#endif
