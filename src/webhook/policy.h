/* Where webhooks may go. A watch must not become a way to probe the operator's network: a
 * destination is an http or https URL whose every address is public, unless the operator
 * allowed its range (breachd --webhook-allow CIDR). The check runs when a watch is added and
 * again at each delivery, on the addresses the delivery then connects to (send.c pins them).
 *
 * Nothing here allocates; a policy is a plain value, filled once at start. */
#ifndef BD_WEBHOOK_POLICY_H
#define BD_WEBHOOK_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "core/result.h"
#include "core/slice.h"

#define BD_WEBHOOK_URL_MAX 2048  /* bytes of a watch's URL */
#define BD_WEBHOOK_SECRET_MIN 16 /* bytes of a signing secret */
#define BD_WEBHOOK_SECRET_MAX 256
#define BD_WATCHES_PER_KEY 100  /* watches one API key may hold */
#define BD_WEBHOOK_ALLOW_MAX 32 /* --webhook-allow ranges */

typedef struct {
    uint8_t addr[16]; /* IPv4 as IPv4-mapped IPv6 */
    int bits;         /* prefix length over the 128 bits */
} bd_webhook_range;

typedef struct {
    bd_webhook_range allow[BD_WEBHOOK_ALLOW_MAX];
    size_t nallow;
} bd_webhook_policy;

/* Parses "10.0.0.0/8", "127.0.0.1" (a /32), "fd00::/8" and adds it to p. false when it is not
 * a range or p is full. */
bool bd_webhook_allow(bd_webhook_policy *p, const char *cidr);

/* Whether a delivery may connect to sa: a public address, or one in an allowed range. An
 * IPv6 address that carries an IPv4 one (IPv4-mapped ::ffff:a.b.c.d, IPv4-compatible
 * ::a.b.c.d, IPv4-translated ::ffff:0:a.b.c.d) is judged as written and as that IPv4
 * address: an allowed range matching either lets it through, a blocked one either stops it. */
bool bd_webhook_address_ok(const bd_webhook_policy *p, const struct sockaddr *sa);

typedef struct {
    bool https;
    char host[256]; /* without brackets for an IPv6 literal */
    int port;
} bd_webhook_url;

/* Checks url's form: http:// or https://, a host, an optional port, no user or password,
 * at most BD_WEBHOOK_URL_MAX bytes, no control characters or spaces. BD_ERR_INVALID with
 * *why (a constant sentence) otherwise. */
bd_result bd_webhook_url_parse(bd_slice url, bd_webhook_url *out, const char **why);

/* The check when a watch is added, without a DNS query (a request must not wait for a
 * stranger's name server): a host that is an address (any form getaddrinfo reads as one
 * without a lookup, "2130706433" too) or localhost (and *.localhost) is checked against the
 * rule now; any other name is checked at each delivery, on what it then resolves to.
 * BD_ERR_INVALID with *why when refused. */
bd_result bd_webhook_check_host(const bd_webhook_policy *p, const bd_webhook_url *u,
                                const char **why);

/* Resolves u's host and checks every address: BD_ERR_INVALID (with *why) when one is private,
 * loopback or otherwise internal and not allowed; BD_ERR_NOT_FOUND when the host does not
 * resolve. The addresses that passed are written to addrs (up to naddrs), *count set. */
bd_result bd_webhook_resolve(const bd_webhook_policy *p, const bd_webhook_url *u,
                             struct sockaddr_storage *addrs, size_t naddrs, size_t *count,
                             const char **why);

#endif
