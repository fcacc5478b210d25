/* Store URIs without their passwords, for messages and logs; libpq keyword/value strings
 * read as libpq reads them (fe-connect.c, conninfo_parse). */
#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "core/hex.h"
#include "store/uri.h"

/* The bounded copy being written: what does not fit is dropped and remembered. */
typedef struct {
    char *out;
    size_t cap, len;
    bool fits;
} redacted;

static void put(redacted *w, const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (w->len + 1 >= w->cap) {
            w->fits = false;
            return;
        }
        w->out[w->len++] = p[i];
    }
}

/* "scheme://": a letter, then letters, digits, '+', '-' or '.'. Returns the text after the
 * "://", or NULL when uri does not start with a scheme. */
static const char *after_scheme(const char *uri)
{
    const char *p = uri;
    if (!isalpha((unsigned char)*p))
        return NULL;
    while (isalnum((unsigned char)*p) || *p == '+' || *p == '-' || *p == '.')
        p++;
    return strncmp(p, "://", 3) == 0 ? p + 3 : NULL;
}

/* libpq decodes a URI's parameter names, and "sslpassword" is as secret as "password". */
bool bd_uri_is_password_name(const char *name, size_t n)
{
    static const char want[] = "password";
    char tail[sizeof want - 1];
    size_t kept = 0; /* the last sizeof tail decoded bytes, in a ring */
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        int32_t escaped = c == '%' && i + 2 < n ? bd_hex_value(name + i + 1, 2) : -1;
        if (escaped >= 0) {
            c = (char)escaped;
            i += 2;
        }
        tail[kept++ % sizeof tail] = c;
    }
    if (kept < sizeof tail)
        return false;
    for (size_t j = 0; j < sizeof tail; j++)
        if (tolower((unsigned char)tail[(kept + j) % sizeof tail]) != want[j])
            return false;
    return true;
}

/* Where the user information ends (its '@'), or NULL when there is none. libpq ends it at
 * the first '@' before any '/', and a '?' does not stop it ("u:p?w@h" has password "p?w");
 * a person may have meant the last '@' before the query ("u:se@cr/et@h"). Either way the
 * later of the two is taken, so the password is always inside what is cut. */
static const char *userinfo_end(const char *p)
{
    const char *libpq = memchr(p, '@', strcspn(p, "/")), *last = NULL;
    size_t head = strcspn(p, "?");
    for (size_t i = 0; i < head; i++)
        if (p[i] == '@')
            last = p + i;
    return libpq && (!last || libpq > last) ? libpq : last;
}

/* "user:password@host/path" -> "user@host/path": n bytes, at the userinfo's '@' or NULL. */
static void put_authority_and_path(redacted *w, const char *p, size_t n, const char *at)
{
    if (!at) {
        put(w, p, n);
        return;
    }
    const char *colon = memchr(p, ':', (size_t)(at - p));
    put(w, p, (size_t)((colon ? colon : at) - p));
    put(w, at, n - (size_t)(at - p));
}

/* "?a=1&password=x&b=2" -> "?a=1&b=2"; "?password=x" -> "". */
static void put_query(redacted *w, const char *q)
{
    bool first = true;
    while (*q) {
        size_t n = strcspn(q, "&"), name = strcspn(q, "=&");
        if (n && !bd_uri_is_password_name(q, name)) {
            put(w, first ? "?" : "&", 1);
            put(w, q, n);
            first = false;
        }
        q += n;
        if (*q == '&')
            q++;
    }
}

/* Spaces as libpq's keyword/value reader skips them. */
static const char *skip_spaces(const char *p)
{
    while (isspace((unsigned char)*p))
        p++;
    return p;
}

bool bd_uri_is_postgres(const char *uri)
{
    if (strncasecmp(uri, "postgresql://", 13) == 0 || strncasecmp(uri, "postgres://", 11) == 0)
        return true;
    const char *p = skip_spaces(uri);
    if (!isalpha((unsigned char)*p) && *p != '_')
        return false;
    while (isalnum((unsigned char)*p) || *p == '_')
        p++;
    return *skip_spaces(p) == '=';
}

int bd_conninfo_next(const char **p, bd_conninfo_pair *pair)
{
    const char *c = skip_spaces(*p);
    *p = c;
    if (!*c)
        return 0;
    pair->keyword = c;
    while (*c && *c != '=' && !isspace((unsigned char)*c))
        c++;
    pair->keyword_len = (size_t)(c - pair->keyword);
    c = skip_spaces(c);
    if (*c != '=')
        return -1;
    c = skip_spaces(c + 1);
    bool quoted = *c == '\'';
    pair->value = quoted ? ++c : c;
    while (*c && (quoted ? *c != '\'' : !isspace((unsigned char)*c)))
        c += c[0] == '\\' && c[1] ? 2 : 1;
    if (quoted && !*c)
        return -1;
    pair->value_len = (size_t)(c - pair->value);
    pair->end = quoted ? c + 1 : c;
    *p = pair->end;
    return 1;
}

/* "host=h password=x dbname=d" -> "host=h dbname=d"; from a part that is not a pair on,
 * "...": it may hold a password libpq could not read as one. */
static void put_keywords(redacted *w, const char *p)
{
    bd_conninfo_pair pair;
    bool first = true;
    int r;
    while ((r = bd_conninfo_next(&p, &pair)) == 1) {
        if (bd_uri_is_password_name(pair.keyword, pair.keyword_len))
            continue;
        if (!first)
            put(w, " ", 1);
        put(w, pair.keyword, (size_t)(pair.end - pair.keyword));
        first = false;
    }
    if (r < 0)
        put(w, first ? "..." : " ...", first ? 3 : 4);
}

bool bd_uri_redact(const char *uri, char *out, size_t cap)
{
    redacted w = {out, cap, 0, true};
    const char *rest = after_scheme(uri);
    if (!rest && bd_uri_is_postgres(uri)) {
        put_keywords(&w, uri);
    } else if (!rest) {
        put(&w, uri, strlen(uri));
    } else {
        const char *at = userinfo_end(rest);
        size_t from = at ? (size_t)(at - rest) : 0;
        size_t head = from + strcspn(rest + from, "?");
        put(&w, uri, (size_t)(rest - uri));
        put_authority_and_path(&w, rest, head, at);
        if (rest[head] == '?')
            put_query(&w, rest + head + 1);
    }
    if (cap > 0)
        out[w.len] = '\0';
    return w.fits && cap > 0;
}
