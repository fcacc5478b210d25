/* base64url without padding (RFC 4648, section 5) for bytes that are no secret, such as a
 * paging token's sealed bytes: a table lookup for each six bits. libsodium's encoder takes
 * the same time whatever the bytes, which keys need and which cost 1.4% of scenario 1's
 * requests in the token alone; keys and sessions keep it. */
#ifndef BD_CORE_BASE64URL_H
#define BD_CORE_BASE64URL_H

#include <stddef.h>
#include <stdint.h>

/* Characters the encoding of n bytes takes, the terminating NUL not counted. */
#define BD_BASE64URL_LEN(n) (((n) / 3) * 4 + ((n) % 3 ? (n) % 3 + 1 : 0))

/* Writes the encoding of the n bytes at in to out, NUL-terminated: out holds
 * BD_BASE64URL_LEN(n) + 1 bytes. Returns the characters written, the NUL not counted. */
size_t bd_base64url_encode(const uint8_t *in, size_t n, char *out);

#endif
