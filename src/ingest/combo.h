/* Line splitters for combo lists (login:password) and stealer logs (URL:login:password).
 * Pure functions on {ptr,len} slices of the line: nothing is copied or allocated; the
 * slices they return point into the line. */
#ifndef BD_INGEST_COMBO_H
#define BD_INGEST_COMBO_H

#include <stdbool.h>
#include <stddef.h>

#include "core/slice.h"

/* The separators a combo list may use, in the order detection prefers them on a tie. */
#define BD_COMBO_SEPARATORS ":;|\t"

/* Splits a combo line at the FIRST sep: the login before it, the password (kept whole, sep
 * included) after it. A trailing '\r' is not part of the line. Returns NULL with *login and
 * *password set, or a constant reason: no separator, an empty login, an empty password.
 * The reason never quotes the line. */
const char *bd_combo_split(bd_slice line, char sep, bd_slice *login, bd_slice *password);

/* Picks the separator of a combo list from a sample of its first lines (text[0..len), whole
 * lines separated by '\n'): each line votes for the separator of BD_COMBO_SEPARATORS that
 * comes first in it; the most votes wins. Returns 0 when no line holds any. */
char bd_combo_detect_separator(const char *text, size_t len);

/* The record field a combo or stealer login goes to: "email" when it holds an '@', else
 * "user_name". */
const char *bd_combo_login_field(bd_slice login);

/* Splits a stealer-log line, URL SEP login SEP password, where SEP is ':', '|', a space or a
 * tab, the same on the line. The URL may have a scheme (https://, android://), user info,
 * a port and a path; without a scheme it starts with the host. The separator is the first of
 * those characters after the host (and port): a ':' followed by 1 to 5 digits is a port when
 * the digits end the URL part (a '/', '?', '#', '|', space or tab follows) or when two more
 * ':'-separated fields follow them. The password is the rest of the line, separators
 * included. On success returns NULL and sets *site (the host, without user info, port or
 * brackets; not lower-cased), *login and *password; else a constant reason that never quotes
 * the line. */
const char *bd_stealer_split(bd_slice line, bd_slice *site, bd_slice *login, bd_slice *password);

#endif
