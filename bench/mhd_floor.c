/* libmicrohttpd alone answering every request with one fixed reply: the floor under any
 * server built on it, as breachd is (issue 31's scenario 1 against nginx).
 *
 *   mhd_floor PORT THREADS POOL_KIB BODY_FILE MODE
 *
 * The daemon runs with breachd's flags (an internal epoll thread pool, ITC, TURBO) and
 * THREADS workers, each connection with a pool of POOL_KIB KiB (breachd's is 48). Every
 * request, whatever its path, gets 200 with BODY_FILE's bytes as the body. MODE says how:
 *   breachd  a response made per request from a copy of the body, with the headers a
 *            breachd reply carries (Content-Type, Vary, Cache-Control,
 *            X-Content-Type-Options, X-Request-Id), as breachd makes its replies;
 *   shared   one response made at start and queued for every request (libmicrohttpd's
 *            cheapest reply: no allocation per request).
 * A request is answered at the second call, as breachd does (an answer at the first closes
 * the connection in libmicrohttpd 0.9.75). Prints the port, then serves until SIGTERM or
 * SIGINT. A bench tool, not part of breachd: built by `make $(BUILD)/mhd_floor`. */
#include <microhttpd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *body;
static size_t body_len;
static struct MHD_Response *shared;
static int per_request;

static enum MHD_Result answer(void *cls, struct MHD_Connection *conn, const char *url,
                              const char *method, const char *version, const char *upload,
                              size_t *upload_size, void **state)
{
    (void)cls, (void)url, (void)method, (void)version, (void)upload, (void)upload_size;
    static int head_seen;
    if (!*state) {
        *state = &head_seen;
        return MHD_YES;
    }
    if (!per_request)
        return MHD_queue_response(conn, MHD_HTTP_OK, shared);
    struct MHD_Response *r = MHD_create_response_from_buffer(body_len, body, MHD_RESPMEM_MUST_COPY);
    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, "Content-Type", "application/json; charset=utf-8");
    MHD_add_response_header(r, "Vary", "Accept-Encoding");
    MHD_add_response_header(r, "Cache-Control", "no-store");
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(r, "X-Request-Id", "0123456789abcdef");
    enum MHD_Result ret = MHD_queue_response(conn, MHD_HTTP_OK, r);
    MHD_destroy_response(r);
    return ret;
}

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *data = NULL;
    size_t cap = 0, n = 0, got;
    do {
        if (n == cap) {
            char *grown = realloc(data, cap = cap ? cap * 2 : 4096);
            if (!grown) {
                free(data);
                fclose(f);
                return NULL;
            }
            data = grown;
        }
        got = fread(data + n, 1, cap - n, f);
        n += got;
    } while (got > 0);
    fclose(f);
    *len = n;
    return data;
}

int main(int argc, char **argv)
{
    if (argc != 6 || (strcmp(argv[5], "breachd") != 0 && strcmp(argv[5], "shared") != 0)) {
        fprintf(stderr, "usage: mhd_floor PORT THREADS POOL_KIB BODY_FILE breachd|shared\n");
        return 2;
    }
    unsigned port = (unsigned)atoi(argv[1]), threads = (unsigned)atoi(argv[2]);
    size_t pool = (size_t)atoi(argv[3]) * 1024;
    per_request = strcmp(argv[5], "breachd") == 0;
    if (!(body = read_file(argv[4], &body_len))) {
        fprintf(stderr, "mhd_floor: cannot read %s\n", argv[4]);
        return 1;
    }
    shared = MHD_create_response_from_buffer(body_len, body, MHD_RESPMEM_PERSISTENT);
    MHD_add_response_header(shared, "Content-Type", "application/json; charset=utf-8");
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGINT);
    pthread_sigmask(SIG_BLOCK, &stop, NULL); /* the daemon's threads inherit the mask */
    struct MHD_Daemon *d = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ITC | MHD_USE_TURBO,
        (uint16_t)port, NULL, NULL, answer, NULL, MHD_OPTION_THREAD_POOL_SIZE, threads,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, pool, MHD_OPTION_LISTEN_BACKLOG_SIZE, 1024u,
        MHD_OPTION_END);
    if (!d) {
        fprintf(stderr, "mhd_floor: cannot listen on port %u\n", port);
        return 1;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    printf("port %u\n", info ? info->port : port);
    fflush(stdout);
    int sig;
    sigwait(&stop, &sig);
    MHD_stop_daemon(d);
    MHD_destroy_response(shared);
    free(body);
    return 0;
}
