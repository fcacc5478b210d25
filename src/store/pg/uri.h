/* libpq's messages made fit for ours: a libpq URI may carry a password (in its user
 * information or a password= parameter), and so may a keyword/value string (password=...),
 * and no log line, error body or message of ours may show one. The URI itself is shown
 * through bd_uri_redact (store/uri.h). */
#ifndef BD_STORE_PG_URI_H
#define BD_STORE_PG_URI_H

#include <stddef.h>

#include "core/result.h"

/* Copies text into out with every occurrence of uri's passwords (as written and
 * percent-decoded; in a keyword/value string as written and unescaped, and every word from
 * a part that is not a pair on) replaced by "***": libpq quotes a malformed URI token back
 * in its reason, and that token can be the password. out is always NUL-terminated; BD_ERR_LIMIT
 * when it was too small. */
bd_result pg_uri_scrub(const char *uri, const char *text, char *out, size_t cap);

#endif
