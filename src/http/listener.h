/* The server's listening socket and the thread that accepts on it, handing each connection to
 * libmicrohttpd (MHD_add_connection). breachd accepts for itself because libmicrohttpd
 * 0.9.75's own way to stop accepting, MHD_quiesce_daemon, races its worker threads on an
 * epoll daemon with a thread pool: both remove the listening socket from the same epoll
 * set, and the loser aborts the process ("Failed to remove listen FD from epoll set").
 * Stopping is now closing a socket this module owns. */
#ifndef BD_HTTP_LISTENER_H
#define BD_HTTP_LISTENER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "core/result.h"

struct MHD_Daemon;
typedef struct bd_listener bd_listener;

/* Binds and listens on addr (SO_REUSEADDR; an IPv6 address listens on IPv6 only). On
 * failure *why says so and nothing is left open. */
bd_result bd_listener_open(const struct sockaddr *addr, socklen_t addrlen, int backlog,
                           bd_listener **out, char *why, size_t whylen);

/* The port bound (the one the system chose for port 0). */
uint16_t bd_listener_port(const bd_listener *l);

/* Starts accepting into daemon, which must run with MHD_USE_ITC and no listening socket
 * of its own. While daemon holds cap connections or more, new ones wait in the backlog,
 * as they would with libmicrohttpd's own listener. */
bd_result bd_listener_start(bd_listener *l, struct MHD_Daemon *daemon, unsigned cap);

/* Stops accepting and closes the socket (new connections are refused from then on);
 * connections already handed over stay the daemon's. NULL is a no-op. */
void bd_listener_close(bd_listener *l);

#endif
