/* A worker's copy of a finished reply that stays right until the store's data version
 * moves: the whole catalog is one such reply, the same bytes for every key, so it is built
 * once per data version and sent as it is (with its ETag and gzip body made once too)
 * instead of being read and written out per request.
 *
 * Ownership: a bd_reply_cache belongs to one worker thread. A kept reply is an immutable,
 * reference-counted block: the cache holds one reference, and a response that sends its
 * bytes takes another (bd_cached_reply_ref) and drops it when libmicrohttpd is done with
 * them, so the bytes go out without a copy even if the cache has moved on meanwhile. */
#ifndef BD_HTTP_REPLY_CACHE_H
#define BD_HTTP_REPLY_CACHE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/slice.h"
#include "http/etag.h"

typedef struct bd_cached_reply {
    atomic_long refs;
    bd_slice body; /* the 200's JSON */
    bd_slice gz;   /* the same, gzip-coded; len 0 when not worth it or not made */
    char etag[BD_ETAG_LEN + 1];
    int64_t records; /* the items it holds, for the access log */
} bd_cached_reply;

/* Takes a reference / drops one (the last frees the block). */
void bd_cached_reply_ref(const bd_cached_reply *r);
void bd_cached_reply_unref(const bd_cached_reply *r);

typedef struct bd_reply_cache bd_reply_cache;

/* NULL when out of memory: the server then builds every reply afresh. */
bd_reply_cache *bd_reply_cache_new(void);
void bd_reply_cache_free(bd_reply_cache *c);

/* The reply kept for (version, variant), or NULL when there is none: variant tells apart
 * replies of one resource (the catalog's number_of_records). Valid while the request runs
 * on the cache's thread; take a reference to keep it longer. */
const bd_cached_reply *bd_reply_cache_get(const bd_reply_cache *c, int64_t version, int64_t variant);

struct bd_gzip;
/* Keeps body as the reply for (version, variant), replacing what was kept; g (NULL: no
 * gzip body) compresses it once. NULL when it could not be kept (too large, out of
 * memory): the caller sends its own bytes. */
const bd_cached_reply *bd_reply_cache_put(bd_reply_cache *c, int64_t version, int64_t variant,
                                          bd_slice body, int64_t records, struct bd_gzip *g);

#endif
