/* Connection deadlines and request-head checks (see guard.h). */
#include "http/guard.h"
#include "http/upload.h"

#include <microhttpd.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>

#define REAP_EVERY_MS 200

typedef struct {
    struct MHD_Connection *conn; /* NULL: slot free */
    int64_t deadline_ms;         /* 0: none (the server is answering) */
} slot;

struct bd_guard {
    pthread_mutex_t lock; /* guards every slot, high and stopping */
    pthread_cond_t wake;
    slot *slots;
    int nslots; /* descriptors 0..nslots-1 */
    int high;   /* one past the highest descriptor in use so far */
    int64_t timeout_ms;
    bool stopping;
    pthread_t reaper;
    _Atomic uint64_t cut;
};

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void *reap(void *arg)
{
    bd_guard *g = arg;
    pthread_mutex_lock(&g->lock);
    while (!g->stopping) {
        int64_t now = mono_ms();
        for (int fd = 0; fd < g->high; fd++) {
            slot *s = &g->slots[fd];
            if (s->conn && s->deadline_ms && s->deadline_ms <= now) {
                /* libmicrohttpd sees the shut-down socket fail and closes the connection
                 * itself; the descriptor stays ours until its close notification. */
                shutdown(fd, SHUT_RDWR);
                s->deadline_ms = 0;
                atomic_fetch_add_explicit(&g->cut, 1, memory_order_relaxed);
            }
        }
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += REAP_EVERY_MS * 1000000L;
        until.tv_sec += until.tv_nsec / 1000000000L;
        until.tv_nsec %= 1000000000L;
        pthread_cond_timedwait(&g->wake, &g->lock, &until);
    }
    pthread_mutex_unlock(&g->lock);
    return NULL;
}

bd_guard *bd_guard_new(unsigned head_timeout_s)
{
    struct rlimit rl;
    int n = 65536;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        rl.rlim_cur < 1u << 24)
        n = (int)rl.rlim_cur;
    bd_guard *g = calloc(1, sizeof *g);
    if (!g)
        return NULL;
    g->slots = calloc((size_t)n, sizeof *g->slots);
    if (!g->slots) {
        free(g);
        return NULL;
    }
    g->nslots = n;
    g->timeout_ms = (int64_t)head_timeout_s * 1000;
    pthread_mutex_init(&g->lock, NULL);
    pthread_cond_init(&g->wake, NULL);
    if (pthread_create(&g->reaper, NULL, reap, g) != 0) {
        pthread_mutex_destroy(&g->lock);
        pthread_cond_destroy(&g->wake);
        free(g->slots);
        free(g);
        return NULL;
    }
    return g;
}

void bd_guard_free(bd_guard *g)
{
    if (!g)
        return;
    pthread_mutex_lock(&g->lock);
    g->stopping = true;
    pthread_cond_signal(&g->wake);
    pthread_mutex_unlock(&g->lock);
    pthread_join(g->reaper, NULL);
    pthread_mutex_destroy(&g->lock);
    pthread_cond_destroy(&g->wake);
    free(g->slots);
    free(g);
}

static int fd_of(struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    return ci ? (int)ci->connect_fd : -1;
}

/* Sets the slot of conn's descriptor; opening claims it, the others only touch their own. */
static void set_slot(bd_guard *g, struct MHD_Connection *conn, bool open, bool close,
                     int64_t deadline_ms)
{
    int fd = fd_of(conn);
    if (fd < 0 || fd >= g->nslots)
        return; /* past the descriptor limit read at start: only the idle timeout applies */
    pthread_mutex_lock(&g->lock);
    slot *s = &g->slots[fd];
    if (open) {
        s->conn = conn;
        if (fd >= g->high)
            g->high = fd + 1;
    }
    if (s->conn == conn) {
        s->deadline_ms = close ? 0 : deadline_ms;
        if (close)
            s->conn = NULL;
    }
    pthread_mutex_unlock(&g->lock);
}

void bd_guard_opened(bd_guard *g, struct MHD_Connection *conn)
{
    set_slot(g, conn, true, false, mono_ms() + g->timeout_ms);
}

void bd_guard_request_in(bd_guard *g, struct MHD_Connection *conn)
{
    set_slot(g, conn, false, false, 0);
}

void bd_guard_reply_sent(bd_guard *g, struct MHD_Connection *conn)
{
    set_slot(g, conn, false, false, mono_ms() + g->timeout_ms);
}

void bd_guard_closed(bd_guard *g, struct MHD_Connection *conn)
{
    set_slot(g, conn, false, true, 0);
}

uint64_t bd_guard_cut_count(const bd_guard *g)
{
    return atomic_load_explicit(&((bd_guard *)g)->cut, memory_order_relaxed);
}

/* ---- request framing ------------------------------------------------------------------- */

unsigned bd_guard_uri_flags(const char *raw_uri)
{
    unsigned flags = 0;
    for (const char *p = raw_uri; *p && *p != '?'; p++)
        if (p[0] == '%' && p[1] == '0' && p[2] == '0')
            flags |= BD_URI_NUL;
    return flags;
}

_Static_assert(BD_UPLOAD_MAX == 16u << 20, "the 413 below says 16 MiB");

typedef struct {
    int content_length, transfer_encoding, host;
    bool te_not_chunked, nul;
    bool body_too_large; /* Content-Length above BD_UPLOAD_MAX */
    int64_t length;      /* Content-Length's value when it is not too large */
    size_t bytes; /* of the head, as near as can be counted */
} head_facts;

static bool name_is(const char *key, size_t key_size, const char *want)
{
    return key_size == strlen(want) && strncasecmp(key, want, key_size) == 0;
}

static enum MHD_Result note_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                   size_t key_size, const char *value, size_t value_size)
{
    (void)kind;
    head_facts *f = cls;
    f->bytes += key_size + value_size + 4; /* "name: value\r\n" */
    if (strlen(key) != key_size || (value && strlen(value) != value_size))
        f->nul = true;
    if (name_is(key, key_size, "Content-Length")) {
        f->content_length++;
        /* libmicrohttpd refuses a malformed value itself; only the size matters here */
        size_t digits = value ? strspn(value, "0123456789") : 0;
        unsigned long n = digits && digits <= 9 ? strtoul(value, NULL, 10) : 0;
        if (digits > 9 || n > BD_UPLOAD_MAX)
            f->body_too_large = true;
        else
            f->length = (int64_t)n;
    } else if (name_is(key, key_size, "Transfer-Encoding")) {
        f->transfer_encoding++;
        if (!value || value_size != 7 || strncasecmp(value, "chunked", 7) != 0)
            f->te_not_chunked = true;
    } else if (name_is(key, key_size, "Host")) {
        f->host++;
    }
    return MHD_YES;
}

static enum MHD_Result count_arg(void *cls, enum MHD_ValueKind kind, const char *key,
                                 size_t key_size, const char *value, size_t value_size)
{
    (void)kind;
    (void)key;
    (void)value;
    ((head_facts *)cls)->bytes += key_size + value_size + 4;
    return MHD_YES;
}

static void problem(bd_head_problem *out, int status, const char *code, const char *message)
{
    *out = (bd_head_problem){status, code, message, true, 0};
}

void bd_guard_check_head(struct MHD_Connection *conn, const char *url, const char *method,
                         const char *version, unsigned uri_flags, bd_head_problem *out)
{
    memset(out, 0, sizeof *out);
    head_facts f = {.bytes = strlen(method) + strlen(url) + 12}; /* " HTTP/1.1\r\n" */
    MHD_get_connection_values_n(conn, MHD_HEADER_KIND, note_header, &f);
    if (f.nul)
        problem(out, 400, "bad_request", "a request header holds a NUL byte");
    else if (uri_flags & BD_URI_NUL)
        problem(out, 400, "bad_request", "the request path holds a NUL byte (%00)");
    else if (f.content_length > 1)
        problem(out, 400, "bad_request", "the request has more than one Content-Length header");
    else if (f.transfer_encoding && (f.te_not_chunked || f.transfer_encoding > 1))
        problem(out, 501, "not_implemented",
                "the only transfer coding this server implements is chunked");
    else if (f.transfer_encoding && f.content_length)
        problem(out, 400, "bad_request",
                "the request has both Content-Length and Transfer-Encoding");
    else if (f.body_too_large)
        problem(out, 413, "payload_too_large", "the request body is larger than 16 MiB");
    else if (strcmp(version, MHD_HTTP_VERSION_1_1) == 0 && f.host != 1)
        problem(out, 400, "bad_request", "an HTTP/1.1 request needs exactly one Host header");
    if (out->status)
        return;
    MHD_get_connection_values_n(conn, MHD_GET_ARGUMENT_KIND, count_arg, &f);
    if (f.bytes > BD_HEAD_MAX)
        problem(out, 431, "header_too_large",
                "the request line and headers must fit in 8192 bytes");
    else
        out->body = f.transfer_encoding ? -1 : f.length;
}
