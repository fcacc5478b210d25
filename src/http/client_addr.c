/* The client address behind trusted proxies (client_addr.h). */
#include "http/client_addr.h"

#include <arpa/inet.h>
#include <string.h>

static const uint8_t V4_MAPPED[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

void bd_ip_from_bytes(int af, const uint8_t *bytes, bd_ip *out)
{
    memset(out, 0, sizeof *out);
    if (af == AF_INET) {
        out->family = 4;
        memcpy(out->addr, bytes, 4);
    } else if (af == AF_INET6 && memcmp(bytes, V4_MAPPED, sizeof V4_MAPPED) == 0) {
        out->family = 4;
        memcpy(out->addr, bytes + 12, 4);
    } else if (af == AF_INET6) {
        out->family = 6;
        memcpy(out->addr, bytes, 16);
    }
}

bool bd_trusted_proxies_add(bd_trusted_proxies *p, const char *cidr)
{
    bd_cidr c;
    if (!cidr || p->n == BD_TRUSTED_PROXY_MAX || !bd_cidr_parse((bd_slice){cidr, strlen(cidr)}, &c))
        return false;
    p->nets[p->n++] = c;
    return true;
}

bool bd_ip_allowed(const bd_cidr *allow, int n, const bd_ip *ip)
{
    if (n == 0)
        return true;
    if (ip->family == 0)
        return false;
    for (int i = 0; i < n; i++)
        if (bd_cidr_contains(&allow[i], ip->family, ip->addr))
            return true;
    return false;
}

bool bd_trusted_proxies_has(const bd_trusted_proxies *p, const bd_ip *ip)
{
    return p && p->n > 0 && bd_ip_allowed(p->nets, p->n, ip);
}

static bool is_space(char c)
{
    return c == ' ' || c == '\t';
}

bool bd_ip_parse(bd_slice s, bd_ip *out)
{
    while (s.len && is_space(s.ptr[0]))
        s.ptr++, s.len--;
    while (s.len && is_space(s.ptr[s.len - 1]))
        s.len--;
    char text[INET6_ADDRSTRLEN + 8];
    if (s.len == 0 || s.len >= sizeof text || memchr(s.ptr, '\0', s.len))
        return false;
    memcpy(text, s.ptr, s.len);
    text[s.len] = '\0';
    char *a = text;
    if (a[0] == '[') { /* [v6] or [v6]:port */
        char *close = strchr(a, ']');
        if (!close || (close[1] != '\0' && close[1] != ':'))
            return false;
        *close = '\0';
        a++;
    } else {
        char *colon = strchr(a, ':');
        if (colon && !strchr(colon + 1, ':')) /* one colon: v4:port */
            *colon = '\0';
    }
    uint8_t bytes[16];
    if (inet_pton(AF_INET, a, bytes) == 1)
        bd_ip_from_bytes(AF_INET, bytes, out);
    else if (inet_pton(AF_INET6, a, bytes) == 1)
        bd_ip_from_bytes(AF_INET6, bytes, out);
    else
        return false;
    return true;
}

void bd_ip_format(const bd_ip *ip, char out[BD_CLIENT_ADDR_TEXT])
{
    out[0] = '\0';
    if (ip->family == 4 || ip->family == 6)
        if (!inet_ntop(ip->family == 4 ? AF_INET : AF_INET6, ip->addr, out, BD_CLIENT_ADDR_TEXT))
            out[0] = '\0';
}

void bd_client_addr_resolve(const bd_trusted_proxies *p, const bd_ip *peer, const bd_slice *xff,
                            size_t n, bd_ip *out)
{
    *out = *peer;
    if (!bd_trusted_proxies_has(p, peer))
        return;
    /* out is the hop that wrote the entry being read: a trusted one, so far */
    for (size_t line = n; line-- > 0;) {
        bd_slice v = xff[line];
        size_t end = v.len;
        for (;;) {
            size_t start = end;
            while (start > 0 && v.ptr[start - 1] != ',')
                start--;
            bd_ip ip;
            if (!bd_ip_parse((bd_slice){v.ptr + start, end - start}, &ip))
                return; /* not an address: the trusted hop right of it answers */
            *out = ip;
            if (!bd_trusted_proxies_has(p, &ip))
                return;
            if (start == 0)
                break;
            end = start - 1; /* before the comma */
        }
    }
}
