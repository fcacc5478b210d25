/* Passwords out of connection URIs, for messages (see uri.h). Parsing follows libpq's own
 * URI reader (fe-connect.c, conninfo_uri_parse_options): the user information is what
 * precedes the first '@' met before any '/', and query keys are percent-decoded. A
 * keyword/value string is read by store/uri.h's bd_conninfo_next, as conninfo_parse reads it. */
#include "store/pg/uri.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/hex.h"
#include "core/slice.h"
#include "store/uri.h"

typedef struct {
    char *p;
    size_t cap, len;
    bool cut;
} writer;

static void put(writer *w, const char *s, size_t n)
{
    if (w->cap == 0)
        return;
    size_t room = w->cap - 1 - w->len;
    if (n > room) {
        n = room;
        w->cut = true;
    }
    memcpy(w->p + w->len, s, n);
    w->len += n;
    w->p[w->len] = '\0';
}

static size_t scheme_len(const char *uri)
{
    if (strncasecmp(uri, "postgresql://", 13) == 0)
        return 13;
    if (strncasecmp(uri, "postgres://", 11) == 0)
        return 11;
    return 0;
}

/* Percent-decodes s into out (room for s.len bytes); a malformed escape is kept as is.
 * Returns the decoded length. */
static size_t decode(bd_slice s, char *out)
{
    size_t n = 0;
    for (size_t i = 0; i < s.len; i++) {
        int32_t escaped = s.ptr[i] == '%' && i + 2 < s.len ? bd_hex_value(s.ptr + i + 1, 2) : -1;
        if (escaped >= 0) {
            out[n++] = (char)escaped;
            i += 2;
        } else {
            out[n++] = s.ptr[i];
        }
    }
    return n;
}

/* Whether a query parameter's key names the password, as libpq would read it. */
static bool is_password_key(bd_slice key)
{
    char k[16];
    if (key.len > 3 * sizeof k)
        return false;
    char buf[3 * sizeof k];
    size_t n = decode(key, buf);
    if (n != 8)
        return false;
    memcpy(k, buf, n);
    k[n] = '\0';
    return strcasecmp(k, "password") == 0;
}

/* The parts of a URI: user information's password, and the query. */
typedef struct {
    bd_slice before_pw; /* scheme and user name */
    bd_slice password;  /* ptr NULL: none in the user information */
    bd_slice host_path; /* from the '@' (included) to the query */
    bd_slice query;     /* after '?', ptr NULL when none */
} uri_parts;

static void split(const char *uri, size_t scheme, uri_parts *u)
{
    const char *a = uri + scheme, *e = a;
    while (*e && *e != '@' && *e != '/')
        e++;
    const char *rest = a;
    u->password = (bd_slice){NULL, 0};
    u->before_pw = (bd_slice){uri, scheme};
    if (*e == '@') {
        const char *colon = memchr(a, ':', (size_t)(e - a));
        const char *user_end = colon ? colon : e;
        u->before_pw.len = (size_t)(user_end - uri);
        if (colon)
            u->password = (bd_slice){colon + 1, (size_t)(e - colon - 1)};
        rest = e;
    }
    const char *q = strchr(rest, '?');
    u->host_path = (bd_slice){rest, q ? (size_t)(q - rest) : strlen(rest)};
    u->query = q ? bd_slice_from(q + 1) : (bd_slice){NULL, 0};
}

/* Calls fn for each "key=value" parameter of a query, with the key and value apart. */
typedef void (*param_fn)(void *ctx, bd_slice whole, bd_slice key, bd_slice value);

static void each_param(bd_slice query, param_fn fn, void *ctx)
{
    size_t i = 0;
    while (query.ptr && i <= query.len) {
        const char *p = query.ptr + i;
        const char *amp = memchr(p, '&', query.len - i);
        size_t n = amp ? (size_t)(amp - p) : query.len - i;
        const char *eq = memchr(p, '=', n);
        bd_slice key = {p, eq ? (size_t)(eq - p) : n};
        bd_slice value = eq ? (bd_slice){eq + 1, n - key.len - 1} : (bd_slice){p + n, 0};
        fn(ctx, (bd_slice){p, n}, key, value);
        i += n + 1;
    }
}

/* The passwords of a URI, as written and decoded; decoded forms live in buf. */
typedef struct {
    bd_slice *v;
    size_t n;
    char *buf;
    size_t used;
} secrets;

static void add_secret(secrets *s, bd_slice raw)
{
    if (raw.len == 0)
        return;
    s->v[s->n++] = raw;
    size_t n = decode(raw, s->buf + s->used);
    s->v[s->n++] = (bd_slice){s->buf + s->used, n};
    s->used += n;
}

static void collect_param(void *ctx, bd_slice whole, bd_slice key, bd_slice value)
{
    (void)whole;
    if (is_password_key(key))
        add_secret(ctx, value);
}

/* A keyword/value string's passwords: each as written and with its backslash escapes
 * undone; from a part libpq cannot read as a pair on, every word between spaces, '=' and
 * quotes (libpq quotes the word it stopped at, and it may be a password written without
 * its keyword). */
static void collect_keywords(secrets *s, const char *p)
{
    bd_conninfo_pair pair;
    int r;
    while ((r = bd_conninfo_next(&p, &pair)) == 1) {
        if (!bd_uri_is_password_name(pair.keyword, pair.keyword_len) || pair.value_len == 0)
            continue;
        s->v[s->n++] = (bd_slice){pair.value, pair.value_len};
        char *plain = s->buf + s->used;
        size_t n = 0;
        for (size_t i = 0; i < pair.value_len; i++) {
            if (pair.value[i] == '\\' && i + 1 < pair.value_len)
                i++;
            plain[n++] = pair.value[i];
        }
        s->v[s->n++] = (bd_slice){plain, n};
        s->used += n;
    }
    static const char apart[] = " \t\n\r\f\v='";
    while (r < 0 && *p) {
        size_t n = strcspn(p, apart);
        if (n)
            s->v[s->n++] = (bd_slice){p, n};
        p += n;
        p += strspn(p, apart);
    }
}

/* The longest secret that text starts with, or 0. */
static size_t secret_at(const secrets *s, const char *text)
{
    size_t best = 0;
    for (size_t i = 0; i < s->n; i++)
        if (s->v[i].len > best && strncmp(text, s->v[i].ptr, s->v[i].len) == 0)
            best = s->v[i].len;
    return best;
}

bd_result pg_uri_scrub(const char *uri, const char *text, char *out, size_t cap)
{
    writer w = {out, cap, 0, false};
    if (cap)
        out[0] = '\0';
    size_t len = strlen(uri), slots = 4 + 2 * len; /* at most two per byte of the URI */
    secrets s = {calloc(slots, sizeof(bd_slice)), 0, malloc(len + 1), 0};
    if (!s.v || !s.buf) {
        free(s.v);
        free(s.buf);
        return BD_ERR_NOMEM; /* out is empty: nothing unscrubbed is shown */
    }
    size_t scheme = scheme_len(uri);
    if (scheme) {
        uri_parts u;
        split(uri, scheme, &u);
        if (u.password.ptr)
            add_secret(&s, u.password);
        each_param(u.query, collect_param, &s);
    } else if (bd_uri_is_postgres(uri)) {
        collect_keywords(&s, uri);
    }
    for (const char *p = text; *p;) {
        size_t n = secret_at(&s, p);
        if (n) {
            put(&w, "***", 3);
            p += n;
        } else {
            put(&w, p++, 1);
        }
    }
    free(s.v);
    free(s.buf);
    return w.cut || cap == 0 ? BD_ERR_LIMIT : BD_OK;
}
