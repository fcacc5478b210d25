/* Store URIs as they may be shown to an operator: without the password they carry. */
#ifndef BD_STORE_URI_H
#define BD_STORE_URI_H

#include <stdbool.h>
#include <stddef.h>

/* Copies uri into out (cap bytes, NUL-terminated when cap > 0) without its secrets: the
 * ":password" of the userinfo ("scheme://user:password@host/...") and every query parameter
 * whose name, percent-decoded and in any case, ends in "password" ("?password=...",
 * "&sslpassword=..."). Text that is not "scheme://..." (a file path) is copied unchanged.
 * The userinfo is taken to end at the last '@' before the query, so a password holding
 * '@' or '/' is still dropped whole: the copy may lose more than the password, never less.
 * Returns false when out was too small; the copy is then cut short, still without them. */
bool bd_uri_redact(const char *uri, char *out, size_t cap);

#endif
