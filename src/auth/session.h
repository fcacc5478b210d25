/* Console sessions (issue 34): what the console's sign-in exchanges an API key for. A
 * session is a cookie sealed (XChaCha20-Poly1305, as paging tokens are, under a key of its
 * own derived from the server secret), so any instance of a cluster opens it and none keeps
 * a table of live sessions. It carries a random id, its issue time, the time it was last
 * used, and the API key itself, which the client cannot read; every request it
 * authenticates goes through the key exactly as if the key had been sent (revocation,
 * expiry, allow list, budget and quota).
 *
 * A session ends BD_SESSION_IDLE seconds after it was last used (the server writes the
 * cookie again, with the new time, at most once a minute), BD_SESSION_MAX seconds after
 * sign-in whatever its use, or when it is signed out: its id is then written to the store
 * (bd_store_session_end) and every instance refuses it.
 *
 * Writes made with a session carry a CSRF token: a keyed hash of the session id, which the
 * console reads from the sign-in's (or GET /console/session's) reply and sends back in the
 * X-CSRF-Token header. */
#ifndef BD_AUTH_SESSION_H
#define BD_AUTH_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "auth/secret.h"
#include "core/slice.h"

#define BD_SESSION_IDLE (30 * 60)
#define BD_SESSION_MAX (12 * 3600)
#define BD_SESSION_REFRESH 60 /* the cookie is written again once it is this old */
#define BD_SESSION_ID_LEN 16
#define BD_SESSION_KEY_MAX 160
#define BD_SESSION_TEXT_MAX 400
#define BD_SESSION_CSRF_LEN 32 /* characters */

typedef struct {
    uint8_t id[BD_SESSION_ID_LEN];
    int64_t issued_at, seen_at; /* Unix seconds */
    size_t key_len;
    char key[BD_SESSION_KEY_MAX];
} bd_session;

typedef enum {
    BD_SESSION_OK,
    BD_SESSION_BAD,     /* not a session of ours, or altered */
    BD_SESSION_EXPIRED, /* idle too long, or older than BD_SESSION_MAX */
} bd_session_status;

/* A new session for key at now (a fresh random id); false when key is too long. */
bool bd_session_new(bd_session *s, bd_slice key, int64_t now);
/* The cookie value (URL-safe base64, NUL-terminated). */
void bd_session_seal(const uint8_t secret[BD_SECRET_LEN], const bd_session *s,
                     char out[BD_SESSION_TEXT_MAX + 1]);
/* Opens a cookie value, checked against the clock; *s filled only on BD_SESSION_OK. */
bd_session_status bd_session_open(const uint8_t secret[BD_SECRET_LEN], bd_slice text,
                                  int64_t now, bd_session *s);
/* The id as 32 hex characters (what bd_store_session_end keeps). */
void bd_session_id_text(const bd_session *s, char out[2 * BD_SESSION_ID_LEN + 1]);
/* The session's CSRF token, and whether a presented one is it (constant time). */
void bd_session_csrf(const uint8_t secret[BD_SECRET_LEN], const bd_session *s,
                     char out[BD_SESSION_CSRF_LEN + 1]);
bool bd_session_csrf_ok(const uint8_t secret[BD_SECRET_LEN], const bd_session *s,
                        bd_slice presented);

#endif
