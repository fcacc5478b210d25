/* PostgreSQL's hash of a byte string (hash_any, Bob Jenkins's lookup3 as PostgreSQL keeps it):
 * what uuid_hash and hashtext return, and so what a Citus cluster hashes a distribution
 * value with to pick its shard. breachd computes it to find the worker that holds a
 * record's shard without asking the coordinator (direct.c). */
#ifndef BD_STORE_PG_HASH_BYTES_H
#define BD_STORE_PG_HASH_BYTES_H

#include <stddef.h>
#include <stdint.h>

/* The hash of len bytes at k, as PostgreSQL's int4 result reads it. */
int32_t pg_hash_bytes(const void *k, size_t len);

#endif
