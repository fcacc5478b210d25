/* The connection guard: what keeps one client from holding the server, and the framing
 * checks a request head must pass before any handler sees it.
 *
 * Deadlines. libmicrohttpd's connection timeout counts idle time only, so a client that
 * sends a byte a second keeps a connection forever. The guard gives every connection a
 * deadline by which the next request (head and any body) must have arrived: head_timeout
 * seconds after the connection opened or the previous reply was sent. A reaper thread
 * shuts down connections past their deadline. Slots are indexed by socket descriptor and
 * remember the connection they belong to, so a late notification never touches a newer
 * connection on a reused descriptor.
 *
 * Ownership: the server owns the guard; every function is safe from any thread. */
#ifndef BD_HTTP_GUARD_H
#define BD_HTTP_GUARD_H

#include <stdbool.h>
#include <stdint.h>

struct MHD_Connection;

typedef struct bd_guard bd_guard;

/* Starts the reaper. NULL when out of memory or the thread cannot start. */
bd_guard *bd_guard_new(unsigned head_timeout_s);
/* Stops the reaper and frees the table. NULL is ignored. */
void bd_guard_free(bd_guard *g);

/* Connection life, from libmicrohttpd's notifications: opened, a request's head and body
 * are in (the deadline is lifted while the server answers), the reply was sent (the next
 * request's deadline starts), closed. */
void bd_guard_opened(bd_guard *g, struct MHD_Connection *conn);
void bd_guard_request_in(bd_guard *g, struct MHD_Connection *conn);
void bd_guard_reply_sent(bd_guard *g, struct MHD_Connection *conn);
void bd_guard_closed(bd_guard *g, struct MHD_Connection *conn);
/* Connections cut at their deadline so far. */
uint64_t bd_guard_cut_count(const bd_guard *g);

/* ---- request framing (RFC 9112) --------------------------------------------------------- */

/* Facts about the raw request target, read before libmicrohttpd decodes it in place. */
enum {
    BD_URI_NUL = 1, /* the path holds %00: the decoded path would be cut short */
};
unsigned bd_guard_uri_flags(const char *raw_uri);

/* What is wrong with a request head, if anything, and the body it announces. */
typedef struct {
    int status;          /* 0: nothing wrong */
    const char *code;    /* error code for the JSON body */
    const char *message; /* a sentence for the client */
    bool close;          /* close the connection after the reply */
    int64_t body;        /* its Content-Length; -1: chunked; 0: none (set when status is 0) */
} bd_head_problem;

#define BD_HEAD_MAX 8192 /* request line plus headers, in bytes */

/* Checks the head of a request: duplicate or conflicting Content-Length, Transfer-Encoding
 * (only "chunked" is implemented, and never together with Content-Length), a missing or
 * repeated Host in HTTP/1.1, NUL bytes in header values, a %00 in the path, and a head
 * past BD_HEAD_MAX (431), counted as near as libmicrohttpd lets us: the decoded target and
 * parameters, and "name: value" per header, in one pass over the headers. A Content-Length
 * above BD_UPLOAD_MAX is 413 here, for every path. */
void bd_guard_check_head(struct MHD_Connection *conn, const char *url, const char *method,
                         const char *version, unsigned uri_flags, bd_head_problem *out);

#endif
