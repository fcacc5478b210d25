/* PostgreSQL's byte-string hash (hash_bytes.h). The bytes are read as little-endian words
 * whatever the machine, as PostgreSQL reads them on the little-endian machines breachd's
 * clusters run on: a big-endian server hashes differently, and there the direct reads
 * would only guess their worker wrong (direct.c: Citus forwards, nothing is lost). */
#include "store/pg/hash_bytes.h"

static uint32_t rot(uint32_t x, int k)
{
    return (x << k) | (x >> (32 - k));
}

static uint32_t word(const uint8_t *k)
{
    return (uint32_t)k[0] | (uint32_t)k[1] << 8 | (uint32_t)k[2] << 16 | (uint32_t)k[3] << 24;
}

/* lookup3's mix of a full 12-byte block into the state */
static void mix(uint32_t *a, uint32_t *b, uint32_t *c)
{
    *a -= *c, *a ^= rot(*c, 4), *c += *b;
    *b -= *a, *b ^= rot(*a, 6), *a += *c;
    *c -= *b, *c ^= rot(*b, 8), *b += *a;
    *a -= *c, *a ^= rot(*c, 16), *c += *b;
    *b -= *a, *b ^= rot(*a, 19), *a += *c;
    *c -= *b, *c ^= rot(*b, 4), *b += *a;
}

/* ... and its final avalanche, which PostgreSQL runs whatever the length */
static void final(uint32_t *a, uint32_t *b, uint32_t *c)
{
    *c ^= *b, *c -= rot(*b, 14);
    *a ^= *c, *a -= rot(*c, 11);
    *b ^= *a, *b -= rot(*a, 25);
    *c ^= *b, *c -= rot(*b, 16);
    *a ^= *c, *a -= rot(*c, 4);
    *b ^= *a, *b -= rot(*a, 14);
    *c ^= *b, *c -= rot(*b, 24);
}

int32_t pg_hash_bytes(const void *key, size_t len)
{
    const uint8_t *k = key;
    uint32_t a, b, c;
    a = b = c = 0x9e3779b9u + (uint32_t)len + 3923095u;
    for (; len >= 12; k += 12, len -= 12) {
        a += word(k);
        b += word(k + 4);
        c += word(k + 8);
        mix(&a, &b, &c);
    }
    /* The last 0-11 bytes: into a, then b, then c from its second byte up (PostgreSQL
     * keeps c's lowest byte for the length, which its seed already holds). */
    for (size_t i = 0; i < len; i++) {
        uint32_t v = k[i];
        if (i < 4)
            a += v << (8 * i);
        else if (i < 8)
            b += v << (8 * (i - 4));
        else
            c += v << (8 * (i - 7));
    }
    final(&a, &b, &c);
    return (int32_t)c;
}
