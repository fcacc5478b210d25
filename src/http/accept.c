/* The Accept header (accept.h). Each element is "type/subtype *( ; param )"; its q-value
 * (0 to 1, up to three decimals) is read, anything else about it ignored. */
#include <stddef.h>
#include <string.h>
#include <strings.h>

#include "http/accept.h"

/* q in thousandths: "q=0.5" is 500; -1 when malformed. */
static int parse_q(const char *p, size_t n)
{
    if (n == 0 || (p[0] != '0' && p[0] != '1'))
        return -1;
    int q = (p[0] - '0') * 1000;
    if (n == 1)
        return q;
    if (p[1] != '.' || n > 5)
        return -1;
    int scale = 100;
    for (size_t i = 2; i < n; i++, scale /= 10) {
        if (p[i] < '0' || p[i] > '9')
            return -1;
        q += (p[i] - '0') * scale;
    }
    return q <= 1000 ? q : -1;
}

static bool is_space(char c)
{
    return c == ' ' || c == '\t';
}

/* Trims spaces around [p, p + n). */
static void trim(const char **p, size_t *n)
{
    while (*n && is_space(**p)) {
        (*p)++;
        (*n)--;
    }
    while (*n && is_space((*p)[*n - 1]))
        (*n)--;
}

static bool same(const char *p, size_t n, const char *lit)
{
    return n == strlen(lit) && strncasecmp(p, lit, n) == 0;
}

bool bd_accept_prefers_csv(const char *accept)
{
    if (!accept)
        return false;
    int csv = -1, json = -1, wild = -1; /* the best q of each; -1: not named */
    for (const char *p = accept; *p;) {
        size_t n = strcspn(p, ",");
        const char *el = p;
        p += n;
        if (*p == ',')
            p++;
        size_t tn = strcspn(el, ";");
        if (tn > n)
            tn = n;
        const char *type = el;
        size_t typelen = tn;
        trim(&type, &typelen);
        int q = 1000;
        for (size_t at = tn; at < n;) { /* ";name=value" parameters */
            at++;
            size_t pn = strcspn(el + at, ";");
            if (at + pn > n)
                pn = n - at;
            const char *param = el + at;
            size_t plen = pn;
            trim(&param, &plen);
            if (plen >= 2 && (param[0] == 'q' || param[0] == 'Q') && param[1] == '=')
                q = parse_q(param + 2, plen - 2);
            at += pn;
        }
        if (q < 0)
            continue;
        if (same(type, typelen, "text/csv")) {
            if (q > csv)
                csv = q;
        } else if (same(type, typelen, "application/json")) {
            if (q > json)
                json = q;
        } else if (same(type, typelen, "application/*") || same(type, typelen, "*/*")) {
            if (q > wild)
                wild = q;
        }
    }
    /* named beats a wildcard of the same q ("text/csv, *\/\*" asks for CSV) */
    return csv > 0 && csv > json && csv >= wild;
}
