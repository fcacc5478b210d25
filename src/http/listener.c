/* The listening socket and its accept thread (listener.h says why breachd accepts for
 * itself). One thread blocks in poll() on the socket and on a stop eventfd; it accepts
 * what is ready and hands each connection over, and libmicrohttpd's worker threads serve
 * it from there exactly as if they had accepted it (same connection limits, same per-address
 * cap, which closes a connection past it at once). */
#define _GNU_SOURCE /* accept4 */
#include "http/listener.h"

#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "core/log.h"

/* Connections taken per wake-up before the stop signal and the cap are looked at again. */
#define ACCEPT_BURST 64
/* How long the thread waits before it looks again at a full daemon, or after the system
 * refused a descriptor (EMFILE and the like). */
#define RETRY_MS 20

struct bd_listener {
    int fd;
    int stop_fd;
    uint16_t port;
    bool running;
    pthread_t thread;
    struct MHD_Daemon *daemon;
    unsigned cap;
    bool starved; /* the last accept found no descriptor or memory: said once, until one works */
};

bd_result bd_listener_open(const struct sockaddr *addr, socklen_t addrlen, int backlog,
                           bd_listener **out, char *why, size_t whylen)
{
    *out = NULL;
    bd_listener *l = calloc(1, sizeof *l);
    if (!l)
        return BD_ERR_NOMEM;
    l->stop_fd = -1;
    l->fd = socket(addr->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int on = 1;
    if (l->fd < 0 || setsockopt(l->fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on) != 0 ||
        (addr->sa_family == AF_INET6 &&
         setsockopt(l->fd, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof on) != 0) ||
        bind(l->fd, addr, addrlen) != 0 || listen(l->fd, backlog) != 0) {
        bd_why(why, whylen, "%s", strerror(errno));
        bd_listener_close(l);
        return BD_ERR_IO;
    }
    struct sockaddr_storage bound;
    socklen_t blen = sizeof bound;
    if (getsockname(l->fd, (struct sockaddr *)&bound, &blen) != 0) {
        bd_why(why, whylen, "%s", strerror(errno));
        bd_listener_close(l);
        return BD_ERR_IO;
    }
    l->port = ntohs(bound.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&bound)->sin6_port
                                                : ((struct sockaddr_in *)&bound)->sin_port);
    *out = l;
    return BD_OK;
}

uint16_t bd_listener_port(const bd_listener *l)
{
    return l ? l->port : 0;
}

static bool daemon_full(const bd_listener *l)
{
    const union MHD_DaemonInfo *info =
        MHD_get_daemon_info(l->daemon, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
    return info && info->num_connections >= l->cap;
}

/* Accepts up to a burst of ready connections. Returns false when the system is out of
 * descriptors or memory for now, so the caller waits before trying again. */
static bool accept_ready(bd_listener *l)
{
    for (int i = 0; i < ACCEPT_BURST; i++) {
        if (daemon_full(l))
            return true;
        struct sockaddr_storage peer;
        socklen_t plen = sizeof peer;
        int c = accept4(l->fd, (struct sockaddr *)&peer, &plen, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (c < 0) {
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
                if (!l->starved) /* once: the retries every RETRY_MS would flood the log */
                    bd_log(BD_LOG_ERROR, "http",
                           "http: cannot accept a connection (%s); new ones wait until it can",
                           strerror(errno));
                l->starved = true;
                return false;
            }
            /* EAGAIN: nothing more is waiting; ECONNABORTED and the like: that client
             * gave up, the next one may not have */
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return true;
            continue;
        }
        if (l->starved) {
            bd_log(BD_LOG_INFO, "http", "http: accepting connections again");
            l->starved = false;
        }
        /* on refusal (a limit, or no memory) libmicrohttpd has closed the socket itself */
        (void)MHD_add_connection(l->daemon, c, (const struct sockaddr *)&peer, plen);
    }
    return true;
}

static void *accept_loop(void *arg)
{
    bd_listener *l = arg;
    for (;;) {
        bool wait = daemon_full(l);
        struct pollfd pf[2] = {{.fd = l->stop_fd, .events = POLLIN},
                               {.fd = l->fd, .events = POLLIN}};
        int n = poll(pf, wait ? 1 : 2, wait ? RETRY_MS : -1);
        if (n < 0 && errno != EINTR) {
            bd_log(BD_LOG_ERROR, "http", "http: poll on the listening socket: %s", strerror(errno));
            n = poll(pf, 1, RETRY_MS);
        }
        if (n > 0 && (pf[0].revents & POLLIN))
            return NULL;
        if (!wait && n > 0 && (pf[1].revents & POLLIN) && !accept_ready(l))
            (void)poll(pf, 1, RETRY_MS);
    }
}

bd_result bd_listener_start(bd_listener *l, struct MHD_Daemon *daemon, unsigned cap)
{
    l->daemon = daemon;
    l->cap = cap;
    l->stop_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (l->stop_fd < 0)
        return BD_ERR_IO;
    if (pthread_create(&l->thread, NULL, accept_loop, l) != 0)
        return BD_ERR_IO;
    l->running = true;
    return BD_OK;
}

void bd_listener_close(bd_listener *l)
{
    if (!l)
        return;
    if (l->running) {
        uint64_t one = 1;
        while (write(l->stop_fd, &one, sizeof one) < 0 && errno == EINTR)
            ;
        pthread_join(l->thread, NULL);
    }
    if (l->stop_fd >= 0)
        close(l->stop_fd);
    if (l->fd >= 0)
        close(l->fd);
    free(l);
}
