/* Request bodies. The API's writes (watches, bulk jobs) take a body; everything else ignores
 * one. A connection's upload is kept in its own capped buffer between libmicrohttpd's calls,
 * because the chunks of one body arrive over several calls with other connections'
 * requests in between.
 *
 * Ownership: one bd_upload per connection, made when it opens and freed when it closes
 * (server.c); only the thread serving the connection touches it. */
#ifndef BD_HTTP_UPLOAD_H
#define BD_HTTP_UPLOAD_H

#include <stdbool.h>
#include <stddef.h>

#include "core/slice.h"

/* The largest body accepted: a bulk job of 100,000 identities as JSON or CSV fits. A
 * Content-Length above it is refused before any byte is read (guard.c). */
#define BD_UPLOAD_MAX (16u << 20)

typedef struct bd_upload bd_upload;

/* NULL when out of memory. */
bd_upload *bd_upload_new(void);
/* NULL is ignored. */
void bd_upload_free(bd_upload *u);
/* Appends a chunk of the body; past BD_UPLOAD_MAX (or when memory runs out) the rest is
 * discarded and the body is marked too large. */
void bd_upload_take(bd_upload *u, const char *data, size_t n);
/* The body received so far (ptr NULL when none came); *too_large when it was cut. */
bd_slice bd_upload_body(const bd_upload *u, bool *too_large);
/* Forgets the body once its request is answered; storage past 256 KiB is given back, so an
 * idle keep-alive connection holds at most that. */
void bd_upload_done(bd_upload *u);

#endif
