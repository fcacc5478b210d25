/* A set of 64-bit keys (hashes, so spread already): open addressing, grown to stay at most
 * three quarters full (linear probing stays within a cache line or two there, and the
 * fuller table holds half as many keys again in the same memory), never past the capacity
 * it was given. */
#ifndef BD_CORE_U64SET_H
#define BD_CORE_U64SET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint64_t *slot; /* 0: empty (key 0 is stored as 1) */
    size_t cap;     /* a power of two, or 0 */
    size_t used;
    size_t max_keys; /* past this many keys adding fails: the caller falls back */
} bd_u64set;

void bd_u64set_init(bd_u64set *s, size_t max_keys);
void bd_u64set_free(bd_u64set *s);
/* Adds key: 1 when it was new, 0 when it was there, -1 when the set is full or out of
 * memory (the set is unchanged). */
int bd_u64set_add(bd_u64set *s, uint64_t key);
/* Asks the CPU to load where key would go, ahead of its add: a table of millions of keys
 * misses the cache at nearly every add. */
void bd_u64set_prefetch(const bd_u64set *s, uint64_t key);

#endif
