/* CIDR parsing, canonical text and matching (inet_pton/inet_ntop, no allocation). */
#include "auth/cidr.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

bool bd_cidr_parse(bd_slice s, bd_cidr *out)
{
    char text[64];
    if (s.len == 0 || s.len >= sizeof text || memchr(s.ptr, '\0', s.len))
        return false;
    memcpy(text, s.ptr, s.len);
    text[s.len] = '\0';
    char *slash = strchr(text, '/');
    int prefix = -1;
    if (slash) {
        const char *p = slash + 1;
        size_t n = strlen(p);
        if (n == 0 || n > 3 || (n > 1 && p[0] == '0'))
            return false;
        prefix = 0;
        for (size_t i = 0; i < n; i++) {
            if (p[i] < '0' || p[i] > '9')
                return false;
            prefix = prefix * 10 + (p[i] - '0');
        }
        *slash = '\0';
    }
    bd_cidr c;
    memset(&c, 0, sizeof c);
    if (inet_pton(AF_INET, text, c.addr) == 1) {
        c.family = 4;
        if (prefix < 0)
            prefix = 32;
        if (prefix > 32)
            return false;
    } else if (inet_pton(AF_INET6, text, c.addr) == 1) {
        c.family = 6;
        if (prefix < 0)
            prefix = 128;
        if (prefix > 128)
            return false;
    } else {
        return false;
    }
    c.prefix = (uint8_t)prefix;
    int bytes = c.family == 4 ? 4 : 16;
    for (int i = 0; i < bytes; i++) {
        int bit0 = i * 8; /* bits of this byte: bit0 .. bit0 + 7 */
        uint8_t keep;
        if (prefix >= bit0 + 8)
            keep = 0xff;
        else if (prefix <= bit0)
            keep = 0;
        else
            keep = (uint8_t)(0xff << (8 - (prefix - bit0)));
        if (c.addr[i] & (uint8_t)~keep)
            return false; /* host bits set */
    }
    *out = c;
    return true;
}

void bd_cidr_format(const bd_cidr *c, char out[64])
{
    char a[INET6_ADDRSTRLEN];
    if (!inet_ntop(c->family == 4 ? AF_INET : AF_INET6, c->addr, a, sizeof a)) {
        out[0] = '\0';
        return;
    }
    snprintf(out, 64, "%s/%u", a, (unsigned)c->prefix);
}

static bool prefix_equal(const uint8_t *a, const uint8_t *b, int prefix)
{
    int full = prefix / 8, rest = prefix % 8;
    if (memcmp(a, b, (size_t)full) != 0)
        return false;
    if (rest == 0)
        return true;
    uint8_t mask = (uint8_t)(0xff << (8 - rest));
    return (a[full] & mask) == (b[full] & mask);
}

bool bd_cidr_contains(const bd_cidr *c, int family, const uint8_t *addr)
{
    static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (family == 6 && c->family == 4 && memcmp(addr, mapped, 12) == 0) {
        family = 4;
        addr += 12;
    }
    if (family != c->family)
        return false;
    return prefix_equal(c->addr, addr, c->prefix);
}
