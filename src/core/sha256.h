/* SHA-256 and HMAC-SHA-256, for every digest breachd computes on its hot paths: the dedup
 * key of each imported record, the keyed hashes of passwords, SSNs, card numbers and CVVs,
 * the hash of each request's API key.
 *
 * Why not libsodium's (which breachd links for everything else): its SHA-256 is portable C.
 * nettle runs the CPU's SHA instructions when it has them (x86 SHA-NI, ARMv8 SHA2), chosen
 * at run time, and falls back to C otherwise: 300 bytes hash in 183 ns against libsodium's
 * 708 on the 2-core test machine, and these digests were a third of an import's checking
 * thread (bench/RESULTS.md, "Import: the checking thread's hashes"). The digests are the
 * same bytes either way (tests/unit/test_sha256.c checks the published test vectors), so
 * stores written before keep matching.
 *
 * Nothing here allocates or fails. A state is a plain value: copying it forks the hash
 * (an HMAC keyed once and copied per message skips hashing the padded key again). */
#ifndef BD_CORE_SHA256_H
#define BD_CORE_SHA256_H

#include <nettle/hmac.h>
#include <nettle/sha2.h>
#include <stddef.h>
#include <stdint.h>

#define BD_SHA256_LEN 32

typedef struct sha256_ctx bd_sha256_state;
typedef struct hmac_sha256_ctx bd_hmac_sha256_state;

void bd_sha256_init(bd_sha256_state *st);
void bd_sha256_update(bd_sha256_state *st, const void *data, size_t len);
void bd_sha256_final(bd_sha256_state *st, uint8_t out[BD_SHA256_LEN]);
/* The digest of one buffer. */
void bd_sha256(const void *data, size_t len, uint8_t out[BD_SHA256_LEN]);

void bd_hmac_sha256_init(bd_hmac_sha256_state *st, const void *key, size_t keylen);
void bd_hmac_sha256_update(bd_hmac_sha256_state *st, const void *data, size_t len);
/* Writes the MAC; the state is keyed again, ready for the next message. */
void bd_hmac_sha256_final(bd_hmac_sha256_state *st, uint8_t out[BD_SHA256_LEN]);

#endif
