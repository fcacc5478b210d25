/* Address blocks (CIDR) for a key's allow list and breachd --trusted-proxy. */
#ifndef BD_AUTH_CIDR_H
#define BD_AUTH_CIDR_H

#include <stdbool.h>
#include <stdint.h>

#include "core/slice.h"

typedef struct {
    uint8_t family; /* 4 or 6 */
    uint8_t prefix; /* 0..32 or 0..128 */
    uint8_t addr[16]; /* network address (host bits zero); IPv4 in the first 4 bytes */
} bd_cidr;

/* "192.0.2.0/24", "2001:db8::/32", or a single address (a /32 or /128). Host bits set
 * below the prefix are refused (192.0.2.1/24), so the canonical text is what was meant.
 * false for anything else (spaces, a zone id, a prefix out of range, leading zeros in the
 * prefix). */
bool bd_cidr_parse(bd_slice s, bd_cidr *out);
/* Canonical text: "192.0.2.0/24", "2001:db8::/32"; a full-length prefix is written too
 * ("192.0.2.7/32"). */
void bd_cidr_format(const bd_cidr *c, char out[64]);
/* Whether the address (4 bytes for family 4, 16 for 6) lies in c. An IPv4-mapped IPv6
 * address (::ffff:a.b.c.d) is matched as its IPv4 address. */
bool bd_cidr_contains(const bd_cidr *c, int family, const uint8_t *addr);

#endif
