/* The listening socket and its accept thread (src/http/listener.c) in front of a real
 * libmicrohttpd daemon with no listener of its own: connections are served, a full daemon
 * leaves new ones waiting in the backlog until one closes, and a closed listener refuses. */
#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/log.h"
#include "http/listener.h"
#include "test.h"

static enum MHD_Result answer(void *cls, struct MHD_Connection *conn, const char *url,
                              const char *method, const char *version, const char *upload,
                              size_t *upload_size, void **state)
{
    (void)cls, (void)url, (void)method, (void)version, (void)upload, (void)upload_size;
    static int seen_head;
    if (!*state) { /* the head alone: a reply queued now would close the connection */
        *state = &seen_head;
        return MHD_YES;
    }
    static const char body[] = "hello";
    struct MHD_Response *r =
        MHD_create_response_from_buffer(sizeof body - 1, (void *)body, MHD_RESPMEM_PERSISTENT);
    enum MHD_Result ret = MHD_queue_response(conn, MHD_HTTP_OK, r);
    MHD_destroy_response(r);
    return ret;
}

/* The listener's cap is what these tests exercise, so libmicrohttpd's own limit is twice it:
 * libmicrohttpd splits its limit between its workers, and a share of one connection each
 * (a cap of 2 over 2 workers) put its own refusal path in play at every accept. With that
 * share the test hung twice in CI (2026-11-28, in and out of ASan) in MHD_stop_daemon, a
 * worker waiting on a libmicrohttpd mutex it held itself (gdb: the mutex's owner was the
 * waiting thread). breachd's shares are 4,096 ÷ its threads by default. */
static struct MHD_Daemon *daemon_without_listener(unsigned cap)
{
    return MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ITC |
                                MHD_USE_NO_LISTEN_SOCKET,
                            0, NULL, NULL, answer, NULL, MHD_OPTION_THREAD_POOL_SIZE, 2u,
                            MHD_OPTION_CONNECTION_LIMIT, 2 * cap, MHD_OPTION_END);
}

static struct sockaddr_in loopback(uint16_t port)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return a;
}

static bd_listener *open_loopback(void)
{
    struct sockaddr_in a = loopback(0);
    bd_listener *l = NULL;
    char why[128] = "";
    if (bd_listener_open((struct sockaddr *)&a, sizeof a, 16, &l, why, sizeof why) != BD_OK)
        TEST_FAIL("bd_listener_open: %s", why);
    return l;
}

static int connect_to(uint16_t port)
{
    struct sockaddr_in a = loopback(port);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Sends a request and waits up to wait_ms for the reply; true when it says 200 and hello. */
static bool served_within(int fd, int wait_ms)
{
    static const char req[] = "GET / HTTP/1.1\r\nHost: t\r\n\r\n";
    if (send(fd, req, sizeof req - 1, MSG_NOSIGNAL) != (ssize_t)(sizeof req - 1))
        return false;
    char got[512];
    size_t n = 0;
    struct pollfd p = {.fd = fd, .events = POLLIN};
    while (n < sizeof got - 1 && poll(&p, 1, wait_ms) == 1) {
        ssize_t r = recv(fd, got + n, sizeof got - 1 - n, 0);
        if (r <= 0)
            break;
        n += (size_t)r;
        got[n] = '\0';
        if (strstr(got, "\r\n\r\nhello"))
            return strncmp(got, "HTTP/1.1 200", 12) == 0;
    }
    return false;
}

/* Whether the reply to a request already sent arrives within 5 s and says 200. */
static bool reply_arrives(int fd)
{
    char got[512];
    struct pollfd p = {.fd = fd, .events = POLLIN};
    if (poll(&p, 1, 5000) != 1)
        return false;
    ssize_t r = recv(fd, got, sizeof got - 1, 0);
    return r > 12 && strncmp(got, "HTTP/1.1 200", 12) == 0;
}

/* Waits up to 5 s for the daemon to hold no connection, as breachd's own stop does
 * (bd_server_quiesce) before MHD_stop_daemon: stopping while its workers were still closing
 * the connections the test had just closed hung once under ASan, a worker waiting on a
 * libmicrohttpd mutex while MHD_stop_daemon joined it. */
static void drain(struct MHD_Daemon *d)
{
    for (int i = 0; i < 250; i++) {
        const union MHD_DaemonInfo *info =
            MHD_get_daemon_info(d, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
        if (!info || info->num_connections == 0)
            return;
        poll(NULL, 0, 20);
    }
}

TEST(test_connections_are_served_and_a_closed_listener_refuses)
{
    struct MHD_Daemon *d = daemon_without_listener(16);
    bd_listener *l = open_loopback();
    CHECK(d && l);
    uint16_t port = bd_listener_port(l);
    CHECK(port != 0);
    CHECK_INT(bd_listener_start(l, d, 16), BD_OK);
    for (int i = 0; i < 3; i++) {
        int fd = connect_to(port);
        CHECK(fd >= 0);
        CHECK(served_within(fd, 5000));
        CHECK(served_within(fd, 5000)); /* the same connection, kept alive */
        close(fd);
    }
    bd_listener_close(l);
    errno = 0;
    CHECK_INT(connect_to(port), -1);
    CHECK_INT(errno, ECONNREFUSED);
    drain(d);
    MHD_stop_daemon(d);
}

TEST(test_a_full_daemon_leaves_new_connections_waiting_until_one_closes)
{
    struct MHD_Daemon *d = daemon_without_listener(2);
    bd_listener *l = open_loopback();
    CHECK(d && l);
    CHECK_INT(bd_listener_start(l, d, 2), BD_OK);
    uint16_t port = bd_listener_port(l);
    int first = connect_to(port), second = connect_to(port);
    CHECK(served_within(first, 5000));
    CHECK(served_within(second, 5000));
    int third = connect_to(port); /* the kernel takes it; breachd does not, yet */
    CHECK(third >= 0);
    CHECK(!served_within(third, 300));
    close(first);
    CHECK(reply_arrives(third)); /* its request is already sent: once accepted, it is served */
    close(second);
    close(third);
    bd_listener_close(l);
    drain(d);
    MHD_stop_daemon(d);
}

TEST(test_a_port_in_use_is_refused_with_the_reason)
{
    bd_listener *a = open_loopback();
    struct sockaddr_in taken = loopback(bd_listener_port(a));
    bd_listener *b = (bd_listener *)1;
    char why[128] = "";
    CHECK_INT(bd_listener_open((struct sockaddr *)&taken, sizeof taken, 16, &b, why, sizeof why),
              BD_ERR_IO);
    CHECK(b == NULL);
    CHECK_STR(why, "Address already in use");
    bd_listener_close(a); /* never started: closing is all it needs */
}

TEST(test_out_of_descriptors_it_says_so_once_then_serves_when_it_can)
{
    int logp[2];
    CHECK(pipe(logp) == 0);
    bd_log_set_fd(logp[1]);
    struct MHD_Daemon *d = daemon_without_listener(16);
    bd_listener *l = open_loopback();
    CHECK_INT(bd_listener_start(l, d, 16), BD_OK);
    struct rlimit was;
    getrlimit(RLIMIT_NOFILE, &was);
    int client = socket(AF_INET, SOCK_STREAM, 0); /* made while there is room */
    /* no descriptor left for the accept: the client's is the last one the limit allows */
    struct rlimit tight = {(rlim_t)client + 1, was.rlim_max};
    CHECK(setrlimit(RLIMIT_NOFILE, &tight) == 0);
    struct sockaddr_in a = loopback(bd_listener_port(l));
    CHECK(connect(client, (struct sockaddr *)&a, sizeof a) == 0); /* the kernel's backlog */
    CHECK(!served_within(client, 300));                           /* ~15 retries meanwhile */
    CHECK(setrlimit(RLIMIT_NOFILE, &was) == 0);
    CHECK(reply_arrives(client));
    close(client);
    bd_listener_close(l);
    MHD_stop_daemon(d);
    bd_log_set_fd(2);
    close(logp[1]);
    char said[4096] = "";
    ssize_t n = read(logp[0], said, sizeof said - 1);
    close(logp[0]);
    said[n > 0 ? n : 0] = '\0';
    const char *first = strstr(said, "cannot accept a connection (Too many open files)");
    CHECK(first != NULL);
    CHECK(first && !strstr(first + 1, "cannot accept")); /* once, not once per retry */
    CHECK(strstr(said, "accepting connections again") != NULL);
}

int main(void)
{
    RUN(test_connections_are_served_and_a_closed_listener_refuses);
    RUN(test_a_full_daemon_leaves_new_connections_waiting_until_one_closes);
    RUN(test_a_port_in_use_is_refused_with_the_reason);
    RUN(test_out_of_descriptors_it_says_so_once_then_serves_when_it_can);
    return TEST_EXIT();
}
