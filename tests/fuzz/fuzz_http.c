/* Fuzz target: raw bytes on a socket to a real breachd request path, in process. The first
 * input starts a server (one worker thread) on a loopback port over a demo store in a
 * temporary directory; every input is sent on a fresh connection, the write side is shut,
 * and the reply is read to the end. "$KEY" in the input stands for a valid API key, so the
 * handlers behind authentication are reached. Whatever the bytes, the server must answer
 * with a well-formed HTTP status line or close, never crash, hang or stop serving. */
#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "app/app.h"
#include "auth/keys.h"
#include "cli/cli.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bd_app *app; /* the whole server, as breachd assembles it */
static uint16_t port;
static char key_text[BD_KEY_TEXT_LEN + 1];
static char store_dir[] = "/tmp/breachd-fuzz-http-XXXXXX";

/* libFuzzer ends a timed run with exit(): the store's folder (the store, its WAL and the
 * secret beside it, no subfolders) goes with the process instead of piling up in /tmp. */
static void remove_store_dir(void)
{
    DIR *d = opendir(store_dir);
    if (!d)
        return;
    struct dirent *e;
    char path[sizeof store_dir + 256];
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", store_dir, e->d_name);
        unlink(path);
    }
    closedir(d);
    rmdir(store_dir);
}

static void start(void)
{
    if (!mkdtemp(store_dir))
        abort();
    atexit(remove_store_dir);
    static char db[128];
    snprintf(db, sizeof db, "%s/store.db", store_dir);
    char *argv[] = {"--db", db, NULL};
    if (bd_cmd_demo(2, argv) != 0)
        abort();
    bd_store *s;
    char why[256];
    uint8_t hash[32];
    int64_t id;
    if (bd_store_open(db, BD_STORE_WRITE, &s, why, sizeof why) != BD_OK ||
        bd_key_generate(key_text, hash) != BD_OK)
        abort();
    bd_key_row row = {.name = bd_slice_from("fuzz"),
                      .plan = bd_slice_from("custom"),
                      .rate_per_hour = 1000000000,
                      .exact_per_day = 1000000000};
    memcpy(row.hash, hash, sizeof hash);
    if (bd_store_key_add(s, &row, &id) != BD_OK)
        abort();
    bd_store_close(s);
    /* CORS on, so that preflights and Origin headers reach their code too */
    static const char *const origins[] = {"https://dash.example"};
    bd_app_config cfg = {.server = {.db = db,
                                    .listen = "127.0.0.1:0",
                                    .threads = 1,
                                    .auth_fail_limit = 1000000,
                                    .header_timeout = 2,
                                    .cors_origins = origins,
                                    .cors_origins_n = 1}};
    if (bd_app_start(&cfg, &app, why, sizeof why) != BD_OK) {
        fprintf(stderr, "fuzz_http: %s\n", why);
        abort();
    }
    port = bd_app_port(app);
}

/* The input with every "$KEY" replaced by the key; NULL past a sane size. */
static uint8_t *expand(const uint8_t *data, size_t size, size_t *out_len)
{
    size_t cap = size + 64 * BD_KEY_TEXT_LEN, n = 0;
    uint8_t *out = malloc(cap);
    for (size_t i = 0; out && i < size;) {
        if (i + 4 <= size && memcmp(data + i, "$KEY", 4) == 0 && n + BD_KEY_TEXT_LEN < cap) {
            memcpy(out + n, key_text, BD_KEY_TEXT_LEN);
            n += BD_KEY_TEXT_LEN;
            i += 4;
        } else {
            out[n++] = data[i++];
        }
    }
    *out_len = n;
    return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!app)
        start();
    size_t len;
    uint8_t *req = expand(data, size, &len);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (!req || fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0)
        abort();
    for (size_t off = 0; off < len;) {
        ssize_t w = send(fd, req + off, len - off, MSG_NOSIGNAL);
        if (w <= 0)
            break; /* the server may answer and close before reading everything */
        off += (size_t)w;
    }
    shutdown(fd, SHUT_WR);
    static char reply[1 << 16];
    size_t got = 0;
    size_t total = 0;
    for (;;) {
        /* libmicrohttpd may leave a half-closed keep-alive connection open until the
         * header deadline after its last reply: once replies came, a quiet 30 ms ends the
         * exchange. Nothing at all within 10 s is a hang. */
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int ready = poll(&p, 1, total ? 30 : 10000);
        if (ready == 0 && total)
            break;
        if (ready != 1) {
            fprintf(stderr, "fuzz_http: no reply and no close within 10 s\n");
            abort();
        }
        ssize_t r = recv(fd, reply + got, sizeof reply - 1 - got, 0);
        if (r <= 0)
            break;
        got += (size_t)r;
        total += (size_t)r;
        if (got == sizeof reply - 1)
            got = 0; /* only the start matters; keep reading to the end */
    }
    close(fd);
    free(req);
    reply[got] = '\0';
    if (got > 0 && got < 9)
        abort(); /* a reply cut inside its status line */
    return 0;
}
