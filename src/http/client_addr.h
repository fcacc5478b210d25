/* The client address of a request: the peer's, or, when the peer is one of the reverse
 * proxies the operator trusts (breachd --trusted-proxy CIDR, repeatable), the rightmost
 * X-Forwarded-For address that is not itself a trusted proxy. Only the proxies' own entries
 * are believed: whatever a client wrote into the header sits left of the entry its proxy
 * appended, and the walk from the right stops at the first address not trusted. A key's
 * allow list (auth/keys.h), the failed-key throttle and the access log use this address.
 * Pure functions (no libmicrohttpd); auth.c reads the headers. */
#ifndef BD_HTTP_CLIENT_ADDR_H
#define BD_HTTP_CLIENT_ADDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "auth/cidr.h"
#include "core/slice.h"

#define BD_TRUSTED_PROXY_MAX 32
#define BD_CLIENT_ADDR_TEXT 46 /* INET6_ADDRSTRLEN */

/* An address: family 4 (the first 4 bytes of addr) or 6; 0 when unknown (no peer address,
 * a Unix socket). An IPv4-mapped IPv6 address (::ffff:a.b.c.d) is always held as IPv4. */
typedef struct {
    int family;
    uint8_t addr[16];
} bd_ip;

typedef struct {
    bd_cidr nets[BD_TRUSTED_PROXY_MAX];
    int n;
} bd_trusted_proxies;

/* Adds a CIDR (auth/cidr.h's forms) to the list; false when it is not one or the list is
 * full (BD_TRUSTED_PROXY_MAX). */
bool bd_trusted_proxies_add(bd_trusted_proxies *p, const char *cidr);
/* Whether ip lies in one of the list's blocks (NULL or empty list: never). */
bool bd_trusted_proxies_has(const bd_trusted_proxies *p, const bd_ip *ip);

/* One X-Forwarded-For entry: an IPv4 or IPv6 address, spaces and tabs around it ignored,
 * also "[v6]", "[v6]:port" and "v4:port". false for anything else ("unknown", a host name,
 * an obfuscated identifier, an empty entry). */
bool bd_ip_parse(bd_slice s, bd_ip *out);
/* The IPv4 or IPv6 address bytes of a socket address family (AF_INET: 4 bytes, AF_INET6:
 * 16) as a bd_ip, an IPv4-mapped IPv6 address as IPv4. */
void bd_ip_from_bytes(int af, const uint8_t *bytes, bd_ip *out);
/* The address as text ("" for an unknown one). */
void bd_ip_format(const bd_ip *ip, char out[BD_CLIENT_ADDR_TEXT]);
/* Whether ip lies in one of n blocks (n 0: anywhere, true). An unknown address is in none. */
bool bd_ip_allowed(const bd_cidr *allow, int n, const bd_ip *ip);

/* The client address of a request from peer carrying the X-Forwarded-For header lines
 * xff[0..n) in the order received (their entries read as one list, left to right). Without
 * trusted proxies, or from a peer that is not one, or without the header: peer. Else the
 * entries are walked from the right: the first that is not a trusted proxy is the client;
 * when every entry is a trusted proxy, the leftmost; an entry that is not an address ends the
 * walk at the trusted hop right of it (which wrote it). */
void bd_client_addr_resolve(const bd_trusted_proxies *p, const bd_ip *peer, const bd_slice *xff,
                            size_t n, bd_ip *out);

#endif
