/* A direct-mapped set of tags in an array of atomics. */
#include "auth/known_keys.h"

#include <sodium.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

struct bd_known_keys {
    uint8_t key[crypto_shorthash_KEYBYTES]; /* random per process */
    uint32_t mask;
    _Atomic uint64_t tags[];
};

bd_known_keys *bd_known_keys_new(uint32_t slots)
{
    uint32_t n = 64;
    while (n < slots && n < (1u << 24))
        n <<= 1;
    bd_known_keys *k = calloc(1, sizeof *k + n * sizeof k->tags[0]);
    if (!k)
        return NULL;
    randombytes_buf(k->key, sizeof k->key);
    k->mask = n - 1;
    return k;
}

void bd_known_keys_free(bd_known_keys *k)
{
    if (k)
        sodium_memzero(k->key, sizeof k->key);
    free(k);
}

uint64_t bd_known_keys_tag(const bd_known_keys *k, uint64_t client, bd_slice key)
{
    uint8_t buf[8 + 256];
    size_t n = key.len < 256 ? key.len : 256;
    memcpy(buf, &client, 8);
    memcpy(buf + 8, key.ptr, n);
    uint8_t out[crypto_shorthash_BYTES];
    crypto_shorthash(out, buf, 8 + n, k->key);
    sodium_memzero(buf, sizeof buf);
    uint64_t tag;
    memcpy(&tag, out, sizeof tag);
    return tag ? tag : 1;
}

void bd_known_keys_add(bd_known_keys *k, uint64_t tag)
{
    atomic_store_explicit(&k->tags[tag & k->mask], tag, memory_order_relaxed);
}

bool bd_known_keys_has(const bd_known_keys *k, uint64_t tag)
{
    return atomic_load_explicit(&((bd_known_keys *)k)->tags[tag & k->mask], memory_order_relaxed) ==
           tag;
}
