/* A website's host as a searchable key (website.h). */
#include "ingest/website.h"

#include <idn2.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static const char why_website[] =
    "a website domain must be a host name like example.com, or a URL whose host is one";
static const char why_ipv6[] = "a website domain must be a host name, not an IPv6 address";
static const char why_idna[] =
    "a website domain's non-ASCII host name must be a valid internationalised domain name "
    "(IDNA)";

static bool is_alpha(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

static bool is_space(unsigned char c)
{
    return c == ' ' || (c >= '\t' && c <= '\r');
}

/* The host part of a URL or bare host: scheme, user info, path/query/fragment and port cut
 * off. Empty when there is none. */
static bd_slice host_part(bd_slice v)
{
    const char *p = v.ptr;
    size_t n = v.len, i = 0;
    if (n && is_alpha((unsigned char)p[0])) { /* scheme "://" */
        size_t j = 1;
        while (j < n && (is_alpha((unsigned char)p[j]) || is_digit((unsigned char)p[j]) ||
                         p[j] == '+' || p[j] == '-' || p[j] == '.'))
            j++;
        if (j + 2 < n && p[j] == ':' && p[j + 1] == '/' && p[j + 2] == '/')
            i = j + 3;
    } else if (n >= 2 && p[0] == '/' && p[1] == '/') { /* scheme-relative */
        i = 2;
    }
    size_t end = i;
    while (end < n && !strchr("/?#\\", p[end]))
        end++;
    const char *at = NULL;
    for (size_t k = i; k < end; k++)
        if (p[k] == '@')
            at = p + k;
    if (at)
        i = (size_t)(at - p) + 1;
    if (i < end && p[i] == '[')
        return (bd_slice){p + i, end - i}; /* an IPv6 literal: refused by the caller */
    size_t colon = end;
    for (size_t k = end; k > i; k--)
        if (p[k - 1] == ':') {
            colon = k - 1;
            break;
        }
    bool port = colon < end;
    for (size_t k = colon + 1; port && k < end; k++)
        port = is_digit((unsigned char)p[k]);
    if (port)
        end = colon;
    return (bd_slice){p + i, end - i};
}

/* Whether h (lower-case ASCII, no trailing dot) is a host name. */
static bool host_name(const char *h, size_t n)
{
    if (n == 0 || n > BD_WEBSITE_HOST_MAX)
        return false;
    size_t labels = 0, label = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i == n || h[i] == '.') {
            if (label == 0 || label > 63 || h[i - 1] == '-')
                return false;
            labels++;
            label = 0;
            continue;
        }
        unsigned char c = (unsigned char)h[i];
        if (!(is_digit(c) || (c >= 'a' && c <= 'z') || c == '-') || (label == 0 && c == '-'))
            return false;
        label++;
    }
    return labels >= 2;
}

const char *bd_website_host(bd_slice v, char *out, size_t *len)
{
    *len = 0;
    out[0] = '\0';
    while (v.len && is_space((unsigned char)v.ptr[0])) {
        v.ptr++;
        v.len--;
    }
    while (v.len && is_space((unsigned char)v.ptr[v.len - 1]))
        v.len--;
    if (v.len && memchr(v.ptr, '\0', v.len))
        return why_website;
    bd_slice h = host_part(v);
    if (h.len && h.ptr[0] == '[')
        return why_ipv6;
    if (h.len && h.ptr[h.len - 1] == '.')
        h.len--;
    if (h.len == 0 || h.len > 1024)
        return why_website;
    bool ascii = true;
    for (size_t i = 0; i < h.len; i++)
        ascii = ascii && (unsigned char)h.ptr[i] < 0x80;
    size_t n = h.len;
    if (ascii) {
        if (n > BD_WEBSITE_HOST_MAX)
            return why_website;
        for (size_t i = 0; i < n; i++) {
            char c = h.ptr[i];
            out[i] = c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
        }
    } else {
        char in[1025];
        memcpy(in, h.ptr, h.len);
        in[h.len] = '\0';
        char *a = NULL;
        if (idn2_to_ascii_8z(in, &a, IDN2_NFC_INPUT | IDN2_NONTRANSITIONAL) != IDN2_OK || !a) {
            idn2_free(a);
            return why_idna;
        }
        n = strlen(a);
        if (n && a[n - 1] == '.')
            n--;
        if (n > BD_WEBSITE_HOST_MAX) {
            idn2_free(a);
            return why_website;
        }
        for (size_t i = 0; i < n; i++) /* idn2 maps case already; ASCII labels kept as given */
            out[i] = a[i] >= 'A' && a[i] <= 'Z' ? (char)(a[i] - 'A' + 'a') : a[i];
        idn2_free(a);
    }
    out[n] = '\0';
    if (!host_name(out, n)) {
        out[0] = '\0';
        return why_website;
    }
    *len = n;
    return NULL;
}
