/* Store URIs as they may be shown to an operator: without the password they carry. */
#ifndef BD_STORE_URI_H
#define BD_STORE_URI_H

#include <stdbool.h>
#include <stddef.h>

/* Whether uri names a PostgreSQL store: a "postgresql://" or "postgres://" URI, or a libpq
 * keyword/value string ("host=/run/postgresql dbname=breachd"): text that, after any
 * spaces, starts with a keyword (a letter or '_', then letters, digits or '_') and '='
 * (spaces allowed around it). Anything else is a SQLite file path; a file whose name looks
 * like "name=..." is given with its directory ("./name=x.db"). */
bool bd_uri_is_postgres(const char *uri);

/* One "keyword = value" of a libpq keyword/value string, as written. */
typedef struct {
    const char *keyword;
    size_t keyword_len;
    const char *value; /* inside its quotes when quoted; backslash escapes left in */
    size_t value_len;
    const char *end; /* just past the value (and its closing quote) */
} bd_conninfo_pair;

/* Reads the pair at *p, as libpq does: spaces skipped, the keyword up to a space or '=',
 * '=', then a value either quoted ('...', a backslash escaping the next byte) or up to the
 * next space. Returns 1 and moves *p past the pair; 0 at the end of the text; -1 when what
 * follows is not a pair (no '=', an unterminated quote): *p is then at its first byte. */
int bd_conninfo_next(const char **p, bd_conninfo_pair *pair);

/* Whether a parameter's name (n bytes; percent escapes decoded) ends in "password" in any
 * case: "password", "sslpassword". */
bool bd_uri_is_password_name(const char *name, size_t n);

/* Copies uri into out (cap bytes, NUL-terminated when cap > 0) without its secrets: the
 * ":password" of the userinfo ("scheme://user:password@host/...") and every query parameter
 * whose name, percent-decoded and in any case, ends in "password" ("?password=...",
 * "&sslpassword=..."). In a keyword/value string, every pair whose keyword ends in
 * "password" is dropped (the others are kept, one space apart), and from a part that is not
 * a pair (an unterminated quote, a word without '=') to the end of the text is shown as
 * "...". Text that is neither (a file path) is copied unchanged.
 * The userinfo is taken to end at the last '@' before the query, so a password holding
 * '@' or '/' is still dropped whole: the copy may lose more than the password, never less.
 * Returns false when out was too small; the copy is then cut short, still without them. */
bool bd_uri_redact(const char *uri, char *out, size_t cap);

#endif
