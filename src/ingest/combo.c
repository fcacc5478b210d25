/* Combo-list and stealer-log line splitting: byte scans over the line, no copies. */
#include "ingest/combo.h"

#include <string.h>

static bd_slice chomp(bd_slice s)
{
    if (s.len && s.ptr[s.len - 1] == '\r')
        s.len--;
    return s;
}

const char *bd_combo_split(bd_slice line, char sep, bd_slice *login, bd_slice *password)
{
    line = chomp(line);
    const char *at = line.len ? memchr(line.ptr, sep, line.len) : NULL;
    if (!at)
        return "no separator on the line (login, separator, password expected)";
    *login = (bd_slice){line.ptr, (size_t)(at - line.ptr)};
    *password = (bd_slice){at + 1, line.len - login->len - 1};
    size_t i = 0;
    while (i < login->len && (login->ptr[i] == ' ' || login->ptr[i] == '\t'))
        i++;
    if (i == login->len)
        return "the login before the separator is empty";
    if (password->len == 0)
        return "the password after the separator is empty";
    return NULL;
}

char bd_combo_detect_separator(const char *text, size_t len)
{
    static const char seps[] = BD_COMBO_SEPARATORS;
    size_t votes[sizeof seps - 1] = {0};
    const char *p = text, *end = text + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *e = nl ? nl : end;
        size_t first = (size_t)(e - p), which = sizeof seps;
        for (size_t k = 0; k < sizeof seps - 1; k++) {
            const char *q = memchr(p, seps[k], (size_t)(e - p));
            if (q && (size_t)(q - p) < first) {
                first = (size_t)(q - p);
                which = k;
            }
        }
        if (which < sizeof seps - 1)
            votes[which]++;
        p = e + 1;
    }
    size_t best = 0;
    for (size_t k = 1; k < sizeof seps - 1; k++)
        if (votes[k] > votes[best])
            best = k;
    return votes[best] ? seps[best] : 0;
}

const char *bd_combo_login_field(bd_slice login)
{
    return login.len && memchr(login.ptr, '@', login.len) ? "email" : "user_name";
}

static bool is_alpha(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Where the scheme's "://" ends, or 0 when the line has no scheme. */
static size_t after_scheme(const char *p, size_t n)
{
    if (n == 0 || !is_alpha(p[0]))
        return 0;
    size_t j = 1;
    while (j < n && (is_alpha(p[j]) || is_digit(p[j]) || p[j] == '+' || p[j] == '-' || p[j] == '.'))
        j++;
    return j + 2 < n && p[j] == ':' && p[j + 1] == '/' && p[j + 2] == '/' ? j + 3 : 0;
}

/* Whether the ':' at p[k] starts a port: 1 to 5 digits that end the URL part, or that are
 * followed by ':' and two more fields. */
static bool is_port(const char *p, size_t n, size_t k)
{
    size_t d = k + 1, e = d;
    while (e < n && e - d < 6 && is_digit(p[e]))
        e++;
    if (e == d || e - d > 5 || e >= n)
        return false;
    if (strchr("/?#| \t", p[e]))
        return true;
    if (p[e] != ':')
        return false;
    const char *more = e + 2 < n ? memchr(p + e + 2, ':', n - e - 2) : NULL;
    return more && (size_t)(more - p) + 1 < n;
}

const char *bd_stealer_split(bd_slice line, bd_slice *site, bd_slice *login, bd_slice *password)
{
    line = chomp(line);
    const char *p = line.ptr;
    size_t n = line.len, hs = after_scheme(p, n), k = hs;
    bool bracket = false;
    while (k < n && !strchr("/?#| \t:", p[k])) {
        if (p[k] == '@' && hs) /* user info (android://key@com.app/): the host follows */
            hs = k + 1;
        else if (p[k] == '@')
            return "the line does not start with a URL (a scheme like https:// or a host)";
        if (p[k] == '[' && k == hs) { /* an IPv6 literal: its colons are not separators */
            const char *close = memchr(p + k, ']', n - k);
            if (!close)
                return "the URL's IPv6 address is not closed with ']'";
            bracket = true;
            k = (size_t)(close - p);
        }
        k++;
    }
    *site = (bd_slice){p + hs + bracket, k - hs - 2 * bracket};
    if (site->len == 0)
        return "the URL has no host";
    if (!after_scheme(p, n)) { /* no scheme: the host must look like one */
        bool dot = false;
        for (size_t i = 0; i < site->len; i++) {
            char c = site->ptr[i];
            if (!is_alpha(c) && !is_digit(c) && c != '-' && c != '.')
                return "the line does not start with a URL (a scheme like https:// or a host)";
            dot = dot || c == '.';
        }
        if (!dot)
            return "the line does not start with a URL (a scheme like https:// or a host)";
    }
    if (k < n && p[k] == ':' && is_port(p, n, k)) {
        k++;
        while (k < n && is_digit(p[k]))
            k++;
    }
    if (k < n && strchr("/?#", p[k]))
        while (k < n && !strchr("| \t:", p[k]))
            k++;
    if (k >= n)
        return "no separator after the URL (URL, login, password expected)";
    char sep = p[k];
    const char *rest = p + k + 1, *end = p + n;
    const char *s2 = memchr(rest, sep, (size_t)(end - rest));
    if (!s2)
        return "no separator after the login (URL, login, password expected)";
    *login = (bd_slice){rest, (size_t)(s2 - rest)};
    *password = (bd_slice){s2 + 1, (size_t)(end - s2 - 1)};
    if (login->len == 0)
        return "the login is empty";
    if (password->len == 0)
        return "the password is empty";
    return NULL;
}
