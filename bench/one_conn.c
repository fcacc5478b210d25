/* One keep-alive connection, one request at a time, every request timed on its own: the
 * latency a caller that waits for each answer sees, without a load generator's own
 * scheduling in the figures (issue 31's one-connection p50 and p99).
 *
 *   one_conn PORT SECONDS PATHS_FILE KEY [FOLLOW_P]
 *
 * Sends GET requests for the paths of PATHS_FILE (one per line) in turn to 127.0.0.1:PORT
 * with the header x-api-key: KEY, each after the last answer has been read in full, for
 * SECONDS. With FOLLOW_P, a 100-record page that names a pagination_token is followed
 * (its path with &paging_token=) with that probability before the next path is taken, as
 * bench/lua/common.lua's pager does for scenario 2.
 *
 * Each latency is the time from the first byte written to the last byte of the answer
 * read (CLOCK_MONOTONIC), kept in memory and sorted at the end; nothing is printed while
 * the clock runs. Prints one line: BENCH {json} in the fields bench/lua/common.lua's done()
 * prints, so bench/run.py reads both alike.
 *
 * A bench tool, not part of breachd: built by `make $(BUILD)/one_conn`. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_PATH_LEN 4096
#define MAX_TOKEN_LEN 1024

typedef struct {
    char *buf;
    size_t len, cap;
} growbuf;

static void die(const char *what) {
    fprintf(stderr, "one_conn: %s: %s\n", what, errno ? strerror(errno) : "failed");
    exit(2);
}

static void reserve(growbuf *b, size_t extra) {
    if (b->len + extra <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 65536;
    while (cap < b->len + extra)
        cap *= 2;
    char *p = realloc(b->buf, cap);
    if (!p)
        die("out of memory");
    b->buf = p;
    b->cap = cap;
}

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static char **read_paths(const char *file, size_t *n) {
    FILE *f = fopen(file, "r");
    if (!f)
        die(file);
    char **v = NULL;
    size_t cap = 0;
    *n = 0;
    char line[MAX_PATH_LEN];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (!line[0])
            continue;
        if (*n == cap) {
            cap = cap ? cap * 2 : 1024;
            v = realloc(v, cap * sizeof *v);
            if (!v)
                die("out of memory");
        }
        v[(*n)++] = strdup(line);
    }
    fclose(f);
    if (*n == 0) {
        errno = 0;
        die("no paths in the file");
    }
    return v;
}

static int connect_loopback(int port) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        die("socket");
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0)
        die("connect");
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

/* Where the header block ends (just past its blank line), or 0 while it has not come. */
static size_t header_end(const growbuf *b) {
    for (size_t i = 3; i < b->len; i++)
        if (b->buf[i] == '\n' && b->buf[i - 1] == '\r' && b->buf[i - 2] == '\n' &&
            b->buf[i - 3] == '\r')
            return i + 1;
    return 0;
}

/* The value of a header in the block [0, end), or NULL. */
static const char *header_value(const growbuf *b, size_t end, const char *name) {
    size_t nl = strlen(name);
    for (size_t i = 0; i + nl + 1 < end; i++) {
        if ((i == 0 || b->buf[i - 1] == '\n') && strncasecmp(b->buf + i, name, nl) == 0 &&
            b->buf[i + nl] == ':') {
            const char *v = b->buf + i + nl + 1;
            while (*v == ' ')
                v++;
            return v;
        }
    }
    return NULL;
}

static void read_more(int fd, growbuf *b) {
    reserve(b, 65536);
    ssize_t got = read(fd, b->buf + b->len, b->cap - b->len);
    if (got <= 0) {
        if (got == 0)
            errno = 0;
        die("the server closed the connection");
    }
    b->len += (size_t)got;
}

/* Reads one whole answer (Content-Length or chunked); returns its status and leaves its
 * body (chunks joined) in body. */
static int read_answer(int fd, growbuf *in, growbuf *body) {
    in->len = 0;
    body->len = 0;
    size_t he;
    while ((he = header_end(in)) == 0)
        read_more(fd, in);
    int status = atoi(in->buf + 9);
    const char *cl = header_value(in, he, "content-length");
    const char *te = header_value(in, he, "transfer-encoding");
    if (cl) {
        size_t need = he + strtoul(cl, NULL, 10);
        while (in->len < need)
            read_more(fd, in);
        reserve(body, need - he + 1);
        memcpy(body->buf, in->buf + he, need - he);
        body->len = need - he;
    } else if (te && strncasecmp(te, "chunked", 7) == 0) {
        size_t pos = he;
        for (;;) {
            char *eol;
            while (!(eol = memchr(in->buf + pos, '\n', in->len - pos)))
                read_more(fd, in);
            size_t size = strtoul(in->buf + pos, NULL, 16);
            size_t data = (size_t)(eol - in->buf) + 1;
            while (in->len < data + size + 2)
                read_more(fd, in);
            if (size == 0)
                break;
            reserve(body, size + 1);
            memcpy(body->buf + body->len, in->buf + data, size);
            body->len += size;
            pos = data + size + 2;
        }
    } else {
        errno = 0;
        die("an answer with neither Content-Length nor chunked encoding");
    }
    body->buf[body->len] = '\0';
    return status;
}

/* The token of a full scenario-2 page worth following, percent-encoded into out; false
 * when the page is not one (the pager's rule in bench/lua/common.lua). */
static bool page_token(const growbuf *body, char *out, size_t outsz) {
    static const char head[] = "{\"records_found\":";
    if (body->len < 8192 || strncmp(body->buf, head, sizeof head - 1) != 0)
        return false;
    const char *p = body->buf + sizeof head - 1;
    while (*p >= '0' && *p <= '9')
        p++;
    static const char tok[] = ",\"pagination_token\":\"";
    if (strncmp(p, tok, sizeof tok - 1) != 0)
        return false;
    p += sizeof tok - 1;
    size_t o = 0;
    for (; *p && *p != '"'; p++) {
        if (o + 4 >= outsz)
            return false;
        unsigned char c = (unsigned char)*p;
        if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
            c == '-' || c == '.' || c == '_' || c == '~')
            out[o++] = (char)c;
        else
            o += (size_t)snprintf(out + o, outsz - o, "%%%02X", c);
    }
    out[o] = '\0';
    return *p == '"';
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The nearest-rank percentile of sorted v, in microseconds. */
static uint64_t pct_us(const uint64_t *v, size_t n, double p) {
    size_t rank = (size_t)(p / 100.0 * (double)n + 0.999999);
    if (rank < 1)
        rank = 1;
    if (rank > n)
        rank = n;
    return v[rank - 1] / 1000;
}

int main(int argc, char **argv) {
    if (argc != 5 && argc != 6) {
        fprintf(stderr, "usage: one_conn PORT SECONDS PATHS_FILE KEY [FOLLOW_P]\n");
        return 2;
    }
    int port = atoi(argv[1]);
    double seconds = atof(argv[2]);
    size_t npaths;
    char **paths = read_paths(argv[3], &npaths);
    const char *key = argv[4];
    double follow_p = argc == 6 ? atof(argv[5]) : 0;
    srand(7);

    int fd = connect_loopback(port);
    size_t cap = 1 << 20, n = 0;
    uint64_t *lat = malloc(cap * sizeof *lat);
    if (!lat)
        die("out of memory");
    growbuf in = {0}, body = {0}, req = {0};
    char follow[MAX_PATH_LEN + MAX_TOKEN_LEN + 32] = "";
    long long first_pages = 0, followed = 0, non_2xx = 0, bytes = 0;
    size_t next = 0;
    uint64_t start = now_ns(), stop = start + (uint64_t)(seconds * 1e9);
    while (now_ns() < stop) {
        const char *path;
        if (follow[0]) {
            path = follow;
            followed++;
        } else {
            path = paths[next];
            next = (next + 1) % npaths;
            first_pages++;
        }
        reserve(&req, strlen(path) + strlen(key) + 128);
        req.len = (size_t)snprintf(req.buf, req.cap,
                                   "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nx-api-key: %s\r\n\r\n",
                                   path, key);
        uint64_t t0 = now_ns();
        for (size_t off = 0; off < req.len;) {
            ssize_t w = write(fd, req.buf + off, req.len - off);
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0)
                die("write");
            off += (size_t)w;
        }
        int status = read_answer(fd, &in, &body);
        uint64_t t1 = now_ns();
        if (n == cap) {
            cap *= 2;
            lat = realloc(lat, cap * sizeof *lat);
            if (!lat)
                die("out of memory");
        }
        lat[n++] = t1 - t0;
        bytes += (long long)in.len;
        if (status < 200 || status > 299)
            non_2xx++;
        char token[MAX_TOKEN_LEN];
        if (follow_p > 0 && status == 200 && page_token(&body, token, sizeof token) &&
            (double)rand() / RAND_MAX < follow_p) {
            /* the first page's path, or the followed page's without its old token */
            char base[MAX_PATH_LEN];
            snprintf(base, sizeof base, "%s", path);
            char *old = strstr(base, "&paging_token=");
            if (old)
                *old = '\0';
            snprintf(follow, sizeof follow, "%s&paging_token=%s", base, token);
        } else {
            follow[0] = '\0';
        }
    }
    uint64_t elapsed = now_ns() - start;
    close(fd);
    qsort(lat, n, sizeof *lat, cmp_u64);
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += (double)lat[i];
    printf("BENCH {\"requests\":%zu,\"duration_us\":%llu,\"bytes\":%lld,\"err_connect\":0,"
           "\"err_read\":0,\"err_write\":0,\"err_status\":%lld,\"err_timeout\":0,"
           "\"lat_mean_us\":%.1f,\"lat_p50_us\":%llu,\"lat_p90_us\":%llu,\"lat_p99_us\":%llu,"
           "\"lat_p999_us\":%llu,\"lat_max_us\":%llu,\"first_pages\":%lld,\"followed\":%lld}\n",
           n, (unsigned long long)(elapsed / 1000), bytes, non_2xx,
           n ? sum / (double)n / 1000.0 : 0.0, (unsigned long long)pct_us(lat, n, 50),
           (unsigned long long)pct_us(lat, n, 90), (unsigned long long)pct_us(lat, n, 99),
           (unsigned long long)pct_us(lat, n, 99.9), (unsigned long long)pct_us(lat, n, 100),
           first_pages, followed);
    return 0;
}
