/* SHA-256 and HMAC-SHA-256 through nettle (see sha256.h for why not libsodium). */
#include "core/sha256.h"

void bd_sha256_init(bd_sha256_state *st)
{
    sha256_init(st);
}

void bd_sha256_update(bd_sha256_state *st, const void *data, size_t len)
{
    sha256_update(st, len, data);
}

void bd_sha256_final(bd_sha256_state *st, uint8_t out[BD_SHA256_LEN])
{
    sha256_digest(st, BD_SHA256_LEN, out);
}

void bd_sha256(const void *data, size_t len, uint8_t out[BD_SHA256_LEN])
{
    bd_sha256_state st;
    sha256_init(&st);
    sha256_update(&st, len, data);
    sha256_digest(&st, BD_SHA256_LEN, out);
}

void bd_hmac_sha256_init(bd_hmac_sha256_state *st, const void *key, size_t keylen)
{
    hmac_sha256_set_key(st, keylen, key);
}

void bd_hmac_sha256_update(bd_hmac_sha256_state *st, const void *data, size_t len)
{
    hmac_sha256_update(st, len, data);
}

void bd_hmac_sha256_final(bd_hmac_sha256_state *st, uint8_t out[BD_SHA256_LEN])
{
    hmac_sha256_digest(st, BD_SHA256_LEN, out);
}
