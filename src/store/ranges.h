/* Pwned Passwords ranges as both backends store them: the packed bucket layout, and the
 * per-transaction accumulator of hashes that a write merges into the buckets. Private to
 * src/store/ (the store.h functions bd_store_range_get and bd_store_range_load, and the
 * password hashes a record put carries, are the interface).
 *
 * Layout. A hash is stored in the bucket of its mode and its first 20 bits (the 5-hex prefix
 * a range request names): bucket key = mode << 20 | prefix, one row per bucket holding one
 * blob. The blob is the bucket's entries in ascending hash order, each
 *     the hash from its third byte on (SHA-1: 18 bytes, NTLM: 14; the first 2 bytes are
 *     the key's, the third byte's high nibble is the prefix's fifth hex digit, kept so that
 *     an entry stays byte-aligned)
 *     its count as an unsigned LEB128 varint (1 to 5 bytes; most counts take 1)
 * so a SHA-1 hash costs 19 bytes and an NTLM hash 15 when counts are below 128, against
 * 24 for the raw hash and a 4-byte count. A range request is one primary-key lookup and one
 * pass over the blob; a row per hash would cost its row header and an index entry each
 * (about 30 more bytes per hash on SQLite, 40 on PostgreSQL). The price is in writes: a
 * merge rewrites each bucket it touches, so writes are accumulated and each touched bucket
 * is read, merged and written once per flush. Measured (bench/RESULTS.md): 19.0 bytes of
 * blob per hash; on disk 20.3-21.5 (SQLite) and 21.7-25.9 (PostgreSQL) bytes per hash,
 * 10M hashes at 9.5 and at 95 per bucket. */
#ifndef BD_STORE_RANGES_H
#define BD_STORE_RANGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/pwhash.h"
#include "store/store.h"

#define BD_RANGE_KEY(mode, prefix) ((uint32_t)(mode) << 20 | (uint32_t)(prefix))
/* The meta key of the range version (bd_store_range_version), which each backend's merge
 * of accumulated hashes moves in the writing transaction. */
#define BD_RANGE_VERSION_KEY "range_version"
/* Bytes of a hash of the mode. */
size_t bd_range_hash_len(bd_range_mode mode);

/* Calls cb(ctx, hash, count) for each entry of the blob of bucket key, in order; stops with
 * BD_OK when cb returns non-zero. BD_ERR_STORE when the blob is malformed. */
bd_result bd_range_decode(uint32_t key, const uint8_t *blob, size_t len, bd_range_cb cb, void *ctx);

typedef enum {
    BD_RANGE_ADD, /* a password a record carried: its count adds up */
    BD_RANGE_MAX, /* a total from a Pwned Passwords download: the larger count stays */
} bd_range_op;

typedef struct {
    uint8_t hash[BD_SHA1_LEN]; /* NTLM: 16 bytes, then zeros */
    uint32_t key;
    uint32_t count;
    uint8_t op;
} bd_range_entry;

/* Hashes written in the current transaction, not yet merged. Owns its array. */
typedef struct {
    bd_range_entry *e;
    size_t n, cap;
    bool sorted; /* in (key, hash) order so far: a sorted download skips the sort */
} bd_range_acc;

/* Entries past which a backend merges what it holds before taking more (28 bytes each). */
#define BD_RANGE_ACC_FLUSH (1u << 20)

void bd_range_acc_init(bd_range_acc *a);
void bd_range_acc_free(bd_range_acc *a);
/* Forgets what it holds (a rollback). */
void bd_range_acc_clear(bd_range_acc *a);
/* Adds one hash; BD_ERR_NOMEM. */
bd_result bd_range_acc_add(bd_range_acc *a, bd_range_mode mode, const uint8_t *hash, uint32_t count,
                           bd_range_op op);
/* Adds the SHA-1 and NTLM hashes a record carries, when it carries them. */
bd_result bd_range_acc_add_record(bd_range_acc *a, const bd_record_in *r);
/* Sorts the entries by (key, hash). */
void bd_range_acc_sort(bd_range_acc *a);

/* How a backend reads and writes one bucket for bd_range_acc_flush. read sets *blob to the
 * stored blob (NULL, 0 when the bucket has none), valid until the next call of either. */
typedef struct {
    bd_result (*read)(void *ctx, uint32_t key, const uint8_t **blob, size_t *len);
    bd_result (*write)(void *ctx, uint32_t key, const uint8_t *blob, size_t len);
    void *ctx;
} bd_range_io;

/* Merges every entry into its bucket: buckets in ascending key order, each read once,
 * merged with its entries and written once. Sorts first when needed. Empties the
 * accumulator on success; on failure it keeps its entries (the caller rolls back). */
bd_result bd_range_acc_flush(bd_range_acc *a, const bd_range_io *io);

/* The merged blob of bucket key: old (may be NULL) with entries e[0..n) (sorted, all of
 * that bucket) folded in, into out (emptied first). BD_ERR_STORE when old is malformed. */
bd_result bd_range_merge(uint32_t key, const uint8_t *old, size_t oldlen, const bd_range_entry *e,
                         size_t n, bd_buf *out);

#endif
