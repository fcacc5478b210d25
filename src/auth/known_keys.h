/* Which API keys have authenticated from which client address: the exception to the
 * failed-key throttle. While an address is throttled, a key is looked up only when it
 * already succeeded from that address, so guessing from a throttled address learns
 * nothing, and a colleague behind the same address keeps working.
 *
 * A fixed table of 64-bit tags (a keyed SipHash of the address id and the key text, never
 * the key itself); a new pair may evict an old one, which then counts as unknown. Safe
 * from any number of threads without a lock. */
#ifndef BD_AUTH_KNOWN_KEYS_H
#define BD_AUTH_KNOWN_KEYS_H

#include <stdbool.h>
#include <stdint.h>

#include "core/slice.h"

typedef struct bd_known_keys bd_known_keys;

/* A table of `slots` tags (rounded up to a power of two); NULL when out of memory. */
bd_known_keys *bd_known_keys_new(uint32_t slots);
void bd_known_keys_free(bd_known_keys *k);
/* The tag of a (client address id, presented key) pair; never 0. */
uint64_t bd_known_keys_tag(const bd_known_keys *k, uint64_t client, bd_slice key);
void bd_known_keys_add(bd_known_keys *k, uint64_t tag);
bool bd_known_keys_has(const bd_known_keys *k, uint64_t tag);

#endif
