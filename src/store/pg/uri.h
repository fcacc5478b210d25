/* Connection URIs made fit for messages: a libpq URI may carry a password (in its user
 * information or a password= parameter), and no log line, error body or message of ours
 * may show one. */
#ifndef BD_STORE_PG_URI_H
#define BD_STORE_PG_URI_H

#include <stddef.h>

#include "core/result.h"

/* Writes uri into out without its password: "postgresql://user:pw@host/db?password=x&a=b"
 * becomes "postgresql://user@host/db?a=b". The user information ends where libpq ends it
 * (at the first '@' before any '/'); a query key is compared after percent-decoding, as
 * libpq reads it. Anything that is not a postgresql:// or postgres:// URI is replaced
 * whole by "(connection string)", since its password could be anywhere. out is always
 * NUL-terminated; BD_ERR_LIMIT when it was too small (out then holds a cut, still
 * password-free text). */
bd_result bd_uri_redact(const char *uri, char *out, size_t cap);

/* Copies text into out with every occurrence of uri's passwords (as written and
 * percent-decoded) replaced by "***": libpq quotes a malformed URI token back in its
 * reason, and that token can be the password. out is always NUL-terminated; BD_ERR_LIMIT
 * when it was too small. */
bd_result bd_uri_scrub(const char *uri, const char *text, char *out, size_t cap);

#endif
