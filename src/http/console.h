/* The web console (issue 34): its pages, scripts and styles (console/, compiled in by the
 * Makefile as build/gen/console_assets.c) served at /console/, and its sessions
 * (auth/session.h): POST /console/session exchanges an API key (x-api-key) for a session
 * cookie, GET tells who is signed in and the CSRF token, DELETE signs out. The API takes the
 * session cookie in place of a key (bd_authenticate), with the CSRF token on writes.
 * breachd --console off: every /console/ path is 404 and no cookie is taken. */
#ifndef BD_HTTP_CONSOLE_H
#define BD_HTTP_CONSOLE_H

#include <stddef.h>

#include "auth/session.h"
#include "core/slice.h"
#include "http/request.h"

#define BD_CONSOLE_COOKIE "breachd_session"

/* One compiled-in file: its path below /console/, its media type, its bytes. */
typedef struct {
    const char *path;
    const char *type;
    const unsigned char *data;
    size_t len;
} bd_console_asset;
extern const bd_console_asset bd_console_assets[];
extern const size_t bd_console_assets_n;

struct bd_server;
void bd_handle_console(struct bd_server *srv, bd_req *rq, bd_slice arg);
void bd_handle_console_session(struct bd_server *srv, bd_req *rq, bd_slice arg);
/* GET /console/logos/{name}: a breach logo the operator placed in --console-logos DIR (a
 * name of letters, digits, '.', '_', '-' ending .png, .jpg, .jpeg, .gif, .webp or .svg, a
 * regular file of at most 512 KiB); 404 otherwise and without the setting. */
void bd_handle_console_logo(struct bd_server *srv, bd_req *rq, bd_slice name);

/* For bd_authenticate on a v7 request without a key: 0 when it carries no session cookie
 * (or the console is off); 1 with the session's key in key and *out (the cookie written
 * again when it is due); -1 with the refusal written: 401 session_expired (ended, signed
 * out, or not ours), 403 csrf_failed (a write without the session's X-CSRF-Token). */
int bd_console_session_key(struct bd_server *srv, bd_req *rq, char key[BD_SESSION_KEY_MAX],
                           bd_slice *out);

/* Whether a route label is the console's (its replies carry the console's security
 * headers: send.c). */
bool bd_console_label(const char *label);

#endif
