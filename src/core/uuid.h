/* UUIDs in their canonical text form: 36 characters, lower-case hex, 8-4-4-4-12. */
#ifndef BD_CORE_UUID_H
#define BD_CORE_UUID_H

#include <stdbool.h>
#include <stdint.h>

#include "core/slice.h"

#define BD_UUID_TEXT_LEN 36

/* Writes the lower-case form of s; false when s is not 8-4-4-4-12 hex (any case). */
bool bd_uuid_canonical(bd_slice s, char out[BD_UUID_TEXT_LEN + 1]);
/* Formats 16 bytes as a version-4 (random) UUID, setting the version and variant bits, so
 * that random or hashed bytes become a well-formed UUID. */
void bd_uuid_from_bytes(const uint8_t bytes[16], char out[BD_UUID_TEXT_LEN + 1]);

#endif
