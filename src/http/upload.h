/* Request bodies. The API's writes (watches, bulk jobs) take a body; everything else discards
 * one. A request that announces a body is authenticated and routed when its head arrives
 * (server.c), and only one let through to a resource that reads its body is kept: in its
 * connection's buffer, capped by the resource's limit, because the chunks of one body arrive
 * over several calls with other connections' requests in between. What a body keeps is
 * taken from the server's budget (upload_budget.h) first: an announced length (Content-Length)
 * all at once when the request is let through, a chunked body's as its bytes arrive.
 *
 * Ownership: one bd_upload per connection, made when it opens and freed when it closes
 * (server.c); only the thread serving the connection touches it. The budget outlives it. */
#ifndef BD_HTTP_UPLOAD_H
#define BD_HTTP_UPLOAD_H

#include <stdbool.h>
#include <stddef.h>

#include "core/slice.h"
#include "http/upload_budget.h"

/* The largest body any resource takes: a bulk job of 100,000 identities as JSON or CSV fits.
 * A Content-Length above it is refused before any byte is read (guard.c); the server's budget
 * is never smaller. */
#define BD_UPLOAD_MAX (16u << 20)

typedef struct bd_upload bd_upload;

typedef enum {
    BD_UPLOAD_WHOLE,     /* every byte that came is kept */
    BD_UPLOAD_TOO_LARGE, /* the body passed its cap (or memory ran out): the rest was discarded */
    BD_UPLOAD_NO_ROOM,   /* a chunked body found the server's budget used up: discarded */
} bd_upload_state;

/* An upload taking its bytes from budget. NULL when out of memory. */
bd_upload *bd_upload_new(bd_upload_budget *budget);
/* Gives back what it holds. NULL is ignored. */
void bd_upload_free(bd_upload *u);
/* Keeps the body of the request whose head was just let through, up to cap bytes (> 0).
 * announced is its Content-Length (taken from the budget now; 0 for a chunked body, whose
 * bytes are taken as they come). false, nothing kept or taken, when the budget has not
 * announced bytes free. Without this call a request's body is discarded as it arrives. */
bool bd_upload_expect(bd_upload *u, size_t cap, size_t announced);
/* Appends a chunk of the body being kept; past its cap or the budget the rest is discarded
 * and the state says which. A body not being kept is discarded. */
void bd_upload_take(bd_upload *u, const char *data, size_t n);
/* The body received so far (ptr NULL when none was kept) and its state. */
bd_slice bd_upload_body(const bd_upload *u, bd_upload_state *state);
/* Forgets the body once its request is answered and gives its budget back; storage past
 * 256 KiB is freed, so an idle keep-alive connection holds at most that. */
void bd_upload_done(bd_upload *u);

#endif
