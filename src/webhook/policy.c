/* Where webhooks may go (policy.h). */
#include "webhook/policy.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Ranges no delivery reaches unless allowed: this host, private networks, shared and
 * link-local space, benchmarking, documentation and reserved blocks, multicast, and their
 * IPv6 counterparts (IPv4 is matched through its IPv4-mapped form, and an IPv6 address
 * that carries an IPv4 one is judged as that one too: embedded_ipv4). */
static const char *const BLOCKED[] = {
    "0.0.0.0/8",       "10.0.0.0/8",     "100.64.0.0/10",  "127.0.0.0/8",    "169.254.0.0/16",
    "172.16.0.0/12",   "192.0.0.0/24",   "192.0.2.0/24",   "192.168.0.0/16", "198.18.0.0/15",
    "198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/4",    "240.0.0.0/4",    "::/128",
    "::1/128",         "64:ff9b::/96",   "64:ff9b:1::/48", "100::/64",       "2001:db8::/32",
    "fc00::/7",        "fe80::/10",      "fec0::/10",      "ff00::/8",       "2002::/16",
};

static const char REFUSED[] = "the url's host is a private, loopback or otherwise internal "
                              "address; the operator allows such ranges with breachd "
                              "--webhook-allow CIDR";

static bool parse_cidr(const char *text, bd_webhook_range *out)
{
    char host[64];
    const char *slash = strchr(text, '/');
    size_t n = slash ? (size_t)(slash - text) : strlen(text);
    if (n == 0 || n >= sizeof host)
        return false;
    memcpy(host, text, n);
    host[n] = '\0';
    int bits;
    memset(out, 0, sizeof *out);
    struct in_addr a4;
    struct in6_addr a6;
    if (inet_pton(AF_INET, host, &a4) == 1) {
        out->addr[10] = out->addr[11] = 0xff;
        memcpy(out->addr + 12, &a4, 4);
        bits = 32;
    } else if (inet_pton(AF_INET6, host, &a6) == 1) {
        memcpy(out->addr, &a6, 16);
        bits = 128;
    } else {
        return false;
    }
    if (slash) {
        char *end;
        long b = strtol(slash + 1, &end, 10);
        if (!slash[1] || *end || b < 0 || b > bits)
            return false;
        bits = (int)b;
    }
    out->bits = bits + (out->addr[10] == 0xff && !memchr(host, ':', n) ? 96 : 0);
    return true;
}

bool bd_webhook_allow(bd_webhook_policy *p, const char *cidr)
{
    if (p->nallow == BD_WEBHOOK_ALLOW_MAX)
        return false;
    return parse_cidr(cidr, &p->allow[p->nallow]) && ++p->nallow;
}

static bool in_range(const uint8_t a[16], const bd_webhook_range *c)
{
    int full = c->bits / 8, rest = c->bits % 8;
    if (memcmp(a, c->addr, (size_t)full) != 0)
        return false;
    if (rest == 0)
        return true;
    uint8_t mask = (uint8_t)(0xff << (8 - rest));
    return (a[full] & mask) == (c->addr[full] & mask);
}

static void mapped(const struct sockaddr *sa, uint8_t out[16])
{
    memset(out, 0, 16);
    if (sa->sa_family == AF_INET) {
        out[10] = out[11] = 0xff;
        memcpy(out + 12, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, 4);
    } else {
        memcpy(out, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, 16);
    }
}

/* The IPv4 address that a is meant to reach, IPv4-mapped, in out: the last 32 bits of an
 * IPv4-compatible address (::a.b.c.d, ::/96, deprecated but still routed through a
 * tunnel where one is set up) or an IPv4-translated one (::ffff:0:a.b.c.d, ::ffff:0:0:0/96,
 * SIIT). False for any other address; an IPv4-mapped one (::ffff:a.b.c.d) is already
 * in the form every range is written in. */
static bool embedded_ipv4(const uint8_t a[16], uint8_t out[16])
{
    static const uint8_t compatible[12] = {0};
    static const uint8_t translated[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0};
    if (memcmp(a, compatible, 12) != 0 && memcmp(a, translated, 12) != 0)
        return false;
    memset(out, 0, 10);
    out[10] = out[11] = 0xff;
    memcpy(out + 12, a + 12, 4);
    return true;
}

/* Whether a (or the IPv4 address it carries, when it has one) lies in c. */
static bool either_in_range(const uint8_t a[16], const uint8_t *v4, const bd_webhook_range *c)
{
    return in_range(a, c) || (v4 && in_range(v4, c));
}

bool bd_webhook_address_ok(const bd_webhook_policy *p, const struct sockaddr *sa)
{
    if (sa->sa_family != AF_INET && sa->sa_family != AF_INET6)
        return false;
    uint8_t a[16], v4buf[16];
    mapped(sa, a);
    /* judged as written and as the IPv4 address it carries: an allowed range lets either
     * through (--webhook-allow ::1/128 opens ::1, 10.0.0.0/8 opens ::10.0.0.1), a blocked
     * one stops either (::169.254.169.254 is the metadata service's address) */
    const uint8_t *v4 = embedded_ipv4(a, v4buf) ? v4buf : NULL;
    for (size_t i = 0; i < p->nallow; i++)
        if (either_in_range(a, v4, &p->allow[i]))
            return true;
    for (size_t i = 0; i < sizeof BLOCKED / sizeof BLOCKED[0]; i++) {
        bd_webhook_range c;
        if (parse_cidr(BLOCKED[i], &c) && either_in_range(a, v4, &c))
            return false;
    }
    return true;
}

bd_result bd_webhook_url_parse(bd_slice url, bd_webhook_url *out, const char **why)
{
    memset(out, 0, sizeof *out);
    *why = NULL;
    if (url.len == 0 || url.len > BD_WEBHOOK_URL_MAX) {
        *why = "the url must be 1 to 2048 bytes";
        return BD_ERR_INVALID;
    }
    for (size_t i = 0; i < url.len; i++)
        if ((unsigned char)url.ptr[i] <= ' ' || (unsigned char)url.ptr[i] >= 0x7f) {
            *why = "the url may hold no spaces, control or non-ASCII characters";
            return BD_ERR_INVALID;
        }
    size_t at;
    if (url.len > 7 && strncasecmp(url.ptr, "http://", 7) == 0) {
        at = 7;
    } else if (url.len > 8 && strncasecmp(url.ptr, "https://", 8) == 0) {
        at = 8;
        out->https = true;
    } else {
        *why = "the url must start with http:// or https://";
        return BD_ERR_INVALID;
    }
    size_t end = at;
    while (end < url.len && url.ptr[end] != '/' && url.ptr[end] != '?' && url.ptr[end] != '#')
        end++;
    bd_slice auth = {url.ptr + at, end - at};
    if (memchr(auth.ptr, '@', auth.len)) {
        *why = "the url may not carry a user name or password";
        return BD_ERR_INVALID;
    }
    if (memchr(url.ptr + end, '#', url.len - end)) {
        *why = "the url may not carry a fragment";
        return BD_ERR_INVALID;
    }
    size_t hl = auth.len, port_at = 0;
    if (auth.len > 0 && auth.ptr[0] == '[') {
        const char *close = memchr(auth.ptr, ']', auth.len);
        if (!close) {
            *why = "the url's IPv6 address lacks its ']'";
            return BD_ERR_INVALID;
        }
        hl = (size_t)(close - auth.ptr) + 1;
        port_at = hl < auth.len && auth.ptr[hl] == ':' ? hl + 1 : 0;
        if (hl < auth.len && !port_at) {
            *why = "the url's host is not followed by a port";
            return BD_ERR_INVALID;
        }
    } else {
        const char *colon = memchr(auth.ptr, ':', auth.len);
        if (colon) {
            hl = (size_t)(colon - auth.ptr);
            port_at = hl + 1;
        }
    }
    bd_slice host =
        auth.ptr[0] == '[' ? (bd_slice){auth.ptr + 1, hl - 2} : (bd_slice){auth.ptr, hl};
    if (host.len == 0 || host.len >= sizeof out->host) {
        *why = "the url must name a host";
        return BD_ERR_INVALID;
    }
    memcpy(out->host, host.ptr, host.len);
    out->host[host.len] = '\0';
    out->port = out->https ? 443 : 80;
    if (port_at) {
        int port = 0;
        size_t i = port_at;
        for (; i < auth.len && auth.ptr[i] >= '0' && auth.ptr[i] <= '9' && port <= 65535; i++)
            port = port * 10 + (auth.ptr[i] - '0');
        if (i != auth.len || i == port_at || port < 1 || port > 65535) {
            *why = "the url's port must be 1 to 65535";
            return BD_ERR_INVALID;
        }
        out->port = port;
    }
    return BD_OK;
}

bd_result bd_webhook_resolve(const bd_webhook_policy *p, const bd_webhook_url *u,
                             struct sockaddr_storage *addrs, size_t naddrs, size_t *count,
                             const char **why)
{
    *count = 0;
    *why = NULL;
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    struct addrinfo *res = NULL;
    char port[8];
    snprintf(port, sizeof port, "%d", u->port);
    if (getaddrinfo(u->host, port, &hints, &res) != 0 || !res) {
        *why = "the url's host does not resolve";
        return BD_ERR_NOT_FOUND;
    }
    bd_result r = BD_OK;
    for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
        if (ai->ai_family != AF_INET && ai->ai_family != AF_INET6)
            continue;
        if (!bd_webhook_address_ok(p, ai->ai_addr)) {
            *why = REFUSED;
            r = BD_ERR_INVALID;
            *count = 0;
            break;
        }
        if (*count < naddrs && ai->ai_addrlen <= sizeof addrs[0])
            memcpy(&addrs[(*count)++], ai->ai_addr, ai->ai_addrlen);
    }
    freeaddrinfo(res);
    if (r == BD_OK && *count == 0) {
        *why = "the url's host does not resolve";
        r = BD_ERR_NOT_FOUND;
    }
    return r;
}

static bool localhost_name(const char *host)
{
    size_t n = strlen(host);
    if (n && host[n - 1] == '.')
        n--; /* the root's dot */
    return (n == 9 && strncasecmp(host, "localhost", 9) == 0) ||
           (n > 10 && strncasecmp(host + n - 10, ".localhost", 10) == 0);
}

bd_result bd_webhook_check_host(const bd_webhook_policy *p, const bd_webhook_url *u,
                                const char **why)
{
    *why = NULL;
    if (localhost_name(u->host)) {
        struct sockaddr_in a4 = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(0x7f000001)};
        struct sockaddr_in6 a6 = {.sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT};
        if (bd_webhook_address_ok(p, (const struct sockaddr *)&a4) &&
            bd_webhook_address_ok(p, (const struct sockaddr *)&a6))
            return BD_OK;
        *why = REFUSED;
        return BD_ERR_INVALID;
    }
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_flags = AI_NUMERICHOST};
    struct addrinfo *res = NULL;
    if (getaddrinfo(u->host, NULL, &hints, &res) != 0 || !res)
        return BD_OK; /* a name: checked at each delivery */
    bd_result r = BD_OK;
    for (struct addrinfo *ai = res; ai && r == BD_OK; ai = ai->ai_next)
        if (!bd_webhook_address_ok(p, ai->ai_addr))
            r = BD_ERR_INVALID;
    freeaddrinfo(res);
    if (r != BD_OK)
        *why = REFUSED;
    return r;
}
