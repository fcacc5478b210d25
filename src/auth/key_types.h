/* A key's identity types (auth/keys.h BD_KEY_TYPE_*) as text: breachctl --types, the admin
 * API's "types", keys list. */
#ifndef BD_AUTH_KEY_TYPES_H
#define BD_AUTH_KEY_TYPES_H

#include <stdbool.h>
#include <stdint.h>

#include "core/buf.h"

/* A comma-separated list of v7 `type` names (email, email_domain, phone_number, username,
 * ip_address, social_security_number, password, password_hash, bitcoin_address; also the
 * short names phone, ssn, hashed_password and the aliases phonenumber, ipaddress), and
 * cards, ASCII case ignored, spaces around a name ignored. false, *mask untouched, for an
 * empty list, an empty item or an unknown name. */
bool bd_key_types_parse(const char *s, uint32_t *mask);
/* The names of mask's bits in bit order (the v7 names, then cards), comma-separated; nothing
 * for 0. Appends to out. */
void bd_key_types_format(uint32_t mask, bd_buf *out);
/* The types a key may search: a stored 0 is every type for a key without a tenant, email and
 * email_domain for a tenant key; otherwise stored itself (bits past BD_KEY_TYPES_ALL dropped). */
uint32_t bd_key_types_resolve(uint32_t stored, int64_t tenant_id);

#endif
