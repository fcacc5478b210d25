/* Content negotiation for the searches (RFC 9110 section 12.5.1): whether an Accept header
 * asks for CSV rather than JSON. */
#ifndef BD_HTTP_ACCEPT_H
#define BD_HTTP_ACCEPT_H

#include <stdbool.h>

/* Whether accept (NULL: the header is absent) gives text/csv a higher q-value than
 * application/json (a tie goes to JSON, the API's own form) and at least the q-value of a
 * wildcard (application/\*, \*\/\*: a type named beats a range of the same q).
 * Media-type names compare without case; parameters other than q are ignored; a malformed
 * element is skipped. */
bool bd_accept_prefers_csv(const char *accept);

#endif
