/* A set of 128-bit keys (the first half of a SHA-256, so spread already): open addressing,
 * grown to stay at most three quarters full (16 bytes a slot: the fuller table is what keeps
 * ten million keys within 256 MiB), never past the number of keys it was given. */
#ifndef BD_CORE_KEY128SET_H
#define BD_CORE_KEY128SET_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint64_t (*slot)[2]; /* {0, 0}: empty (that key is stored as {0, 1}) */
    size_t cap;          /* a power of two, or 0 */
    size_t used;
    size_t max_keys; /* past this many keys adding fails: the caller falls back */
} bd_key128set;

void bd_key128set_init(bd_key128set *s, size_t max_keys);
void bd_key128set_free(bd_key128set *s);
/* Adds the 16 bytes at key: 1 when they were new, 0 when they were there, -1 when the set
 * is full or out of memory (the set is unchanged). */
int bd_key128set_add(bd_key128set *s, const uint8_t key[16]);
/* Starts fetching the slot where key's search will begin, for an add some rows later: the
 * set is larger than the caches, and each add otherwise waits for memory. */
void bd_key128set_prefetch(const bd_key128set *s, const uint8_t key[16]);

#endif
