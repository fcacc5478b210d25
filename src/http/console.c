/* The web console's assets and sessions (console.h). */
#include "http/console.h"

#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <pthread.h>
#include <sodium.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/log.h"
#include "http/server_impl.h"

/* bd_console_assets: console/'s files, written by scripts/embed_console.py at build time
 * (Makefile) */
#include "console_assets.inc"

#define SIGNIN_FAILS 5      /* failed sign-ins from one address ... */
#define SIGNIN_PERIOD 60    /* ... per this many seconds, then 429 */

static bd_ratelimit *signin_fails;
static pthread_once_t signin_once = PTHREAD_ONCE_INIT;

static void signin_init(void)
{
    signin_fails = bd_ratelimit_new(4096);
}

bool bd_console_label(const char *label)
{
    return label && strncmp(label, "console", 7) == 0;
}

static bool reading(const bd_req *rq)
{
    return strcmp(rq->method, "GET") == 0 || strcmp(rq->method, "HEAD") == 0;
}

void bd_handle_console(bd_server *srv, bd_req *rq, bd_slice arg)
{
    if (srv->cfg.console_off) {
        bd_reply_error(rq, 404, "not_found", "the console is turned off (breachd --console off)");
        return;
    }
    if (!bd_params_check(rq, NULL, NULL))
        return;
    bd_slice want = arg.ptr ? arg : (bd_slice){"index.html", 10}; /* /console/: its page */
    for (size_t i = 0; i < bd_console_assets_n; i++) {
        const bd_console_asset *a = &bd_console_assets[i];
        if (strlen(a->path) != want.len || memcmp(a->path, want.ptr, want.len) != 0)
            continue;
        bd_reply_begin(rq, 200);
        rq->content_type = a->type;
        if (bd_buf_append(rq->body, a->data, a->len) != BD_OK)
            bd_reply_error(rq, 500, "internal_error", "the console file could not be sent");
        return;
    }
    bd_reply_error(rq, 404, "not_found", "no such console page");
}

/* ---- breach logos the operator placed (--console-logos DIR) -------------------------- */
#define LOGO_NAME_MAX 128
#define LOGO_SIZE_MAX (512u << 10)

/* The media type of a logo's name: a letter or digit, then letters, digits, '.', '_', '-',
 * ending in a known image extension; NULL for any other name (so no path, no dot file). */
static const char *logo_type(bd_slice n)
{
    static const struct {
        const char *ext, *type;
    } types[] = {{".png", "image/png"},   {".jpg", "image/jpeg"}, {".jpeg", "image/jpeg"},
                 {".gif", "image/gif"},   {".webp", "image/webp"}, {".svg", "image/svg+xml"}};
    if (n.len == 0 || n.len > LOGO_NAME_MAX)
        return NULL;
    for (size_t i = 0; i < n.len; i++) {
        char c = n.ptr[i];
        bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        if (!alnum && (i == 0 || (c != '.' && c != '_' && c != '-')))
            return NULL;
    }
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        size_t e = strlen(types[i].ext);
        if (n.len > e && strncasecmp(n.ptr + n.len - e, types[i].ext, e) == 0)
            return types[i].type;
    }
    return NULL;
}

void bd_handle_console_logo(bd_server *srv, bd_req *rq, bd_slice name)
{
    if (srv->cfg.console_off) {
        bd_reply_error(rq, 404, "not_found", "the console is turned off (breachd --console off)");
        return;
    }
    if (!bd_params_check(rq, NULL, NULL))
        return;
    const char *type = logo_type(name);
    if (!srv->cfg.console_logos || !type) {
        bd_reply_error(rq, 404, "not_found", "no such logo");
        return;
    }
    char path[4096];
    int n = snprintf(path, sizeof path, "%s/%.*s", srv->cfg.console_logos, (int)name.len,
                     name.ptr);
    int fd = n > 0 && (size_t)n < sizeof path ? open(path, O_RDONLY | O_CLOEXEC) : -1;
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
        (uint64_t)st.st_size > LOGO_SIZE_MAX) {
        if (fd >= 0)
            close(fd);
        bd_reply_error(rq, 404, "not_found", "no such logo");
        return;
    }
    bd_reply_begin(rq, 200);
    rq->content_type = type;
    size_t want = (size_t)st.st_size, got = 0;
    bd_result r = bd_buf_reserve(rq->body, want);
    while (r == BD_OK && got < want) {
        ssize_t k = read(fd, rq->body->data + rq->body->len + got, want - got);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            r = BD_ERR_IO;
        else
            got += (size_t)k;
    }
    close(fd);
    if (r != BD_OK) {
        bd_log(BD_LOG_WARN, "console", "logo %s could not be read", path);
        bd_reply_error(rq, 500, "internal_error", "the logo could not be read");
        return;
    }
    rq->body->len += got;
    rq->body->data[rq->body->len] = '\0';
}

/* A non-zero id for the client's address (auth.c's throttle keys the same way). */
static uint64_t client_id(const bd_ip *ip)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    size_t n = ip->family == 4 ? 4 : ip->family == 6 ? 16 : 0;
    for (size_t i = 0; i < n; i++)
        h = (h ^ ip->addr[i]) * 1099511628211ULL;
    return h ? h : 1;
}

static void set_cookie(const bd_server *srv, bd_req *rq, const char *value, int64_t max_age)
{
    char c[BD_SESSION_TEXT_MAX + 160];
    snprintf(c, sizeof c, "%s=%s; Path=/; Max-Age=%lld; HttpOnly; SameSite=Strict%s",
             BD_CONSOLE_COOKIE, value, (long long)max_age, srv->tls_cert ? "; Secure" : "");
    bd_reply_header(rq, "Set-Cookie", c);
}

static void write_session(const bd_server *srv, bd_req *rq, const bd_session *s)
{
    char text[BD_SESSION_TEXT_MAX + 1];
    bd_session_seal(srv->secret, s, text);
    set_cookie(srv, rq, text, BD_SESSION_MAX - (s->seen_at - s->issued_at));
    sodium_memzero(text, sizeof text);
}

static void ended(const bd_server *srv, bd_req *rq)
{
    bd_reply_error(rq, 401, "session_expired",
                   "the console session has ended or was signed out; sign in again");
    set_cookie(srv, rq, "", 0);
}

/* The request's session, opened and checked against the signed-out list: 1; 0 when it
 * carries no cookie; -1 with 401 written. */
static int session_of(bd_server *srv, bd_req *rq, bd_session *s)
{
    const char *c = MHD_lookup_connection_value(rq->conn, MHD_COOKIE_KIND, BD_CONSOLE_COOKIE);
    if (!c || !*c)
        return 0;
    int64_t now = bd_now_us() / 1000000;
    if (bd_session_open(srv->secret, (bd_slice){c, strlen(c)}, now, s) != BD_SESSION_OK) {
        ended(srv, rq);
        return -1;
    }
    char id[2 * BD_SESSION_ID_LEN + 1];
    bd_session_id_text(s, id);
    bool gone = false;
    bd_result r = bd_store_read_begin(rq->store);
    if (r == BD_OK)
        r = bd_store_session_ended(rq->store, (bd_slice){id, strlen(id)}, &gone);
    bd_store_read_end(rq->store);
    if (r != BD_OK) {
        sodium_memzero(s, sizeof *s);
        bd_reply_store_error(rq, r);
        return -1;
    }
    if (gone) {
        sodium_memzero(s, sizeof *s);
        ended(srv, rq);
        return -1;
    }
    return 1;
}

static bool csrf_ok(bd_server *srv, bd_req *rq, const bd_session *s)
{
    const char *t = MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, "X-CSRF-Token");
    if (t && bd_session_csrf_ok(srv->secret, s, (bd_slice){t, strlen(t)}))
        return true;
    bd_reply_error(rq, 403, "csrf_failed",
                   "a write made with a console session must carry its X-CSRF-Token header");
    return false;
}

/* Writes the cookie again with a new last-use time once it is BD_SESSION_REFRESH old. */
static void touch(bd_server *srv, bd_req *rq, bd_session *s)
{
    int64_t now = bd_now_us() / 1000000;
    if (now - s->seen_at < BD_SESSION_REFRESH)
        return;
    s->seen_at = now;
    write_session(srv, rq, s);
}

int bd_console_session_key(bd_server *srv, bd_req *rq, char key[BD_SESSION_KEY_MAX],
                           bd_slice *out)
{
    if (srv->cfg.console_off)
        return 0;
    bd_session s;
    int got = session_of(srv, rq, &s);
    if (got <= 0)
        return got;
    if (!reading(rq) && !csrf_ok(srv, rq, &s)) {
        sodium_memzero(&s, sizeof s);
        return -1;
    }
    touch(srv, rq, &s);
    memcpy(key, s.key, s.key_len);
    *out = (bd_slice){key, s.key_len};
    sodium_memzero(&s, sizeof s);
    return 1;
}

/* {"csrf_token", "api_base", "idle_timeout", "expires_at", "key": {name, plan, tenant, role}} */
static void describe(bd_server *srv, bd_req *rq, int status, const bd_session *s,
                     const bd_key_info *k)
{
    char csrf[BD_SESSION_CSRF_LEN + 1];
    bd_session_csrf(srv->secret, s, csrf);
    bd_json *w = &rq->json;
    size_t extra = rq->extra_len; /* the cookie, kept */
    bd_reply_begin(rq, status);
    rq->extra_len = extra;
    bd_json_object_begin(w);
    BD_JSON_KEY(w, "csrf_token");
    bd_json_cstring(w, csrf);
    BD_JSON_KEY(w, "api_base");
    bd_json_cstring(w, srv->base);
    BD_JSON_KEY(w, "idle_timeout");
    bd_json_int(w, BD_SESSION_IDLE);
    bd_json_utc_member(w, "expires_at", s->issued_at + BD_SESSION_MAX);
    BD_JSON_KEY(w, "key");
    bd_json_object_begin(w);
    BD_JSON_KEY(w, "name");
    bd_json_cstring(w, k->name);
    BD_JSON_KEY(w, "plan");
    bd_json_cstring(w, k->plan);
    BD_JSON_KEY(w, "tenant");
    if (k->tenant_id)
        bd_json_int(w, k->tenant_id);
    else
        bd_json_null(w);
    BD_JSON_KEY(w, "role");
    bd_json_cstring(w, k->role == BD_KEY_ROLE_ADMIN ? "admin" : "user");
    bd_json_object_end(w);
    bd_json_object_end(w);
    bd_reply_finish(rq);
}

static void sign_in(bd_server *srv, bd_req *rq)
{
    const char *key = NULL;
    size_t len = 0;
    if (MHD_lookup_connection_value_n(rq->conn, MHD_HEADER_KIND, "x-api-key", 9, &key, &len) !=
            MHD_YES ||
        !key || len == 0) {
        bd_reply_error(rq, 401, "unauthorized", "send the API key in the x-api-key header");
        return;
    }
    pthread_once(&signin_once, signin_init);
    uint64_t client = client_id(bd_req_client(srv, rq));
    int64_t now_us = bd_now_us();
    bd_rate_decision d;
    if (signin_fails) {
        bd_ratelimit_peek(signin_fails, client, SIGNIN_FAILS, SIGNIN_PERIOD, now_us, &d);
        if (!d.allowed) {
            rq->retry_after = d.retry_after;
            bd_reply_error(rq, 429, "rate_limited",
                           "too many failed sign-ins from your address; retry in %lld seconds",
                           (long long)d.retry_after);
            return;
        }
    }
    if (!bd_authenticate(srv, rq, false)) {
        if (signin_fails && (rq->status == 401 || rq->status == 403))
            bd_ratelimit_take(signin_fails, client, SIGNIN_FAILS, SIGNIN_PERIOD, now_us, &d);
        return;
    }
    bd_session s;
    if (!bd_session_new(&s, (bd_slice){key, len}, now_us / 1000000)) {
        bd_reply_error(rq, 422, "validation_error", "the API key is too long for a session");
        return;
    }
    rq->extra_len = 0;
    write_session(srv, rq, &s);
    describe(srv, rq, 201, &s, &rq->key);
    sodium_memzero(&s, sizeof s);
}

static void who(bd_server *srv, bd_req *rq)
{
    bd_session s;
    int got = session_of(srv, rq, &s);
    if (got == 0)
        bd_reply_error(rq, 401, "unauthorized", "not signed in");
    if (got <= 0)
        return;
    bd_key_info k;
    if (bd_keyring_lookup(srv->keys, (bd_slice){s.key, s.key_len}, bd_now_us() / 1000000, &k) !=
        BD_KEY_VALID) {
        sodium_memzero(&s, sizeof s);
        ended(srv, rq);
        return;
    }
    touch(srv, rq, &s);
    describe(srv, rq, 200, &s, &k);
    sodium_memzero(&s, sizeof s);
}

static void sign_out(bd_server *srv, bd_req *rq)
{
    bd_session s;
    int got = session_of(srv, rq, &s);
    if (got == 0)
        bd_reply_error(rq, 401, "unauthorized", "not signed in");
    if (got <= 0)
        return;
    if (!csrf_ok(srv, rq, &s)) {
        sodium_memzero(&s, sizeof s);
        return;
    }
    char id[2 * BD_SESSION_ID_LEN + 1];
    bd_session_id_text(&s, id);
    int64_t now = bd_now_us() / 1000000;
    bd_store *w = bd_req_writer(rq);
    bd_result r = w ? bd_store_session_end(w, (bd_slice){id, strlen(id)},
                                           s.issued_at + BD_SESSION_MAX + 1, now)
                    : BD_ERR_STORE;
    sodium_memzero(&s, sizeof s);
    if (!w)
        return;
    if (r != BD_OK) {
        bd_reply_store_error(rq, r);
        return;
    }
    bd_reply_begin(rq, 204);
    set_cookie(srv, rq, "", 0);
}

void bd_handle_console_session(bd_server *srv, bd_req *rq, bd_slice arg)
{
    (void)arg;
    if (srv->cfg.console_off) {
        bd_reply_error(rq, 404, "not_found", "the console is turned off (breachd --console off)");
        return;
    }
    if (!bd_params_check(rq, NULL, NULL))
        return;
    if (strcmp(rq->method, "POST") == 0)
        sign_in(srv, rq);
    else if (strcmp(rq->method, "DELETE") == 0)
        sign_out(srv, rq);
    else
        who(srv, rq);
}
