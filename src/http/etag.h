/* Entity tags for the replies a client may revalidate (the breach catalog, one breach, the
 * HIBP catalog, one HIBP breach and the data classes): a hash of the reply's JSON, so every
 * breachd instance of one store gives the same tag for the same data without agreeing on
 * anything, and a tag changes exactly when what the client would receive does. */
#ifndef BD_HTTP_ETAG_H
#define BD_HTTP_ETAG_H

#include <stdbool.h>

#include "core/slice.h"

/* W/"<32 hex digits>": weak, because the same JSON goes out gzip-compressed or not
 * (gzip.h), and If-None-Match compares weakly anyway (RFC 9110 section 13.1.2). */
#define BD_ETAG_LEN 36

/* The tag of a reply body, NUL-terminated in out. */
void bd_etag_of(bd_slice body, char out[BD_ETAG_LEN + 1]);

/* Whether an If-None-Match value (NULL: absent) matches etag: "*", or a comma-separated
 * list holding the same opaque tag, weak or strong. A malformed member matches nothing. */
bool bd_etag_matches(const char *if_none_match, const char *etag);

#endif
