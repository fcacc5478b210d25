/* The unsalted hashes Have I Been Pwned publishes passwords as: SHA-1 of the password's
 * bytes, and NTLM (MD4 of the password as UTF-16LE). Both come from nettle; nothing here
 * allocates or fails. */
#ifndef BD_CORE_PWHASH_H
#define BD_CORE_PWHASH_H

#include <stddef.h>
#include <stdint.h>

#include "core/slice.h"

#define BD_SHA1_LEN 20
#define BD_NTLM_LEN 16

/* SHA-1 of the password's bytes as given (UTF-8). */
void bd_pw_sha1(bd_slice pw, uint8_t out[BD_SHA1_LEN]);
/* MD4 of the password as UTF-16LE. Each well-formed UTF-8 sequence becomes its code point
 * (a surrogate pair past U+FFFF); a byte that is not part of one becomes U+FFFD, as the
 * JSON writer shows it. */
void bd_pw_ntlm(bd_slice pw, uint8_t out[BD_NTLM_LEN]);

#endif
