/* gzip content coding for replies: whether a client accepts it (RFC 9110 section 12.5.3),
 * and the compression itself, with one zlib stream per worker thread reset between replies
 * so a reply costs no allocation once the thread's buffers have grown.
 *
 * Ownership: a bd_gzip belongs to one worker thread. */
#ifndef BD_HTTP_GZIP_H
#define BD_HTTP_GZIP_H

#include <stdbool.h>
#include <stddef.h>

#include "core/buf.h"
#include "core/result.h"
#include "core/slice.h"

/* Replies at or under this many bytes go out as they are: the gzip header and trailer and
 * the compression time would cost more than the bytes saved. */
#define BD_GZIP_MIN 1024

/* Whether an Accept-Encoding value (NULL: the header is absent) accepts gzip: "gzip" or
 * "x-gzip" with a q-value above 0, or "*" above 0 when gzip is not named. An absent header
 * accepts only the identity coding here (RFC 9110 allows any; a client that never asked
 * should get bytes it can read). */
bool bd_gzip_accepted(const char *accept_encoding);

typedef struct bd_gzip bd_gzip;

/* NULL when out of memory. */
bd_gzip *bd_gzip_new(void);
/* NULL is ignored. */
void bd_gzip_free(bd_gzip *g);
/* Compresses in into out (reset first) as one gzip member. BD_ERR_LIMIT when out's cap is
 * passed, BD_ERR_NOMEM, other zlib failures BD_ERR_IO; out is then
 * unspecified and the caller sends in as it is. */
bd_result bd_gzip_compress(bd_gzip *g, bd_slice in, bd_buf *out);

#endif
