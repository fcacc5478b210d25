/* A local copy of a store's password ranges that a server serves /range/ from: written after
 * each range version (bd_store_range_version) from one consistent read of the store, mapped
 * (mmap), and swapped in whole when the version changes, so that a range request on a
 * database server costs what it costs on SQLite (one lookup in a table and one pass over a
 * bucket's blob) instead of a round trip to the database. app/svc_range_snapshot.c keeps it
 * up to date; hibp/ranges.c serves from the one published here, or from the store while
 * none is.
 *
 * The file (host byte order: a cache of one machine, never copied to another):
 *     header, 96 bytes: magic "BDRSNAP\1"; format (uint32, 1); keys (uint32, 2^21: every
 *         bucket key of both modes, store/ranges.h); the range version (uint64); the blobs'
 *         bytes (uint64); the BLAKE2b-256 of the blobs; the BLAKE2b-256 of the header (this
 *         field zeroed) and the offset table
 *     offset table: keys + 1 uint64, the blob of bucket key k is [off[k], off[k+1]) of
 *     the blobs: each bucket's blob as the store keeps it (store/ranges.h), in key order.
 * A file is written under a temporary name, synced and renamed over the old one, so a crash
 * leaves either file whole; a mapped file stays readable after a newer one replaced its name.
 * One that is truncated, of another format or whose digests do not match is refused. */
#ifndef BD_STORE_RANGE_SNAPSHOT_H
#define BD_STORE_RANGE_SNAPSHOT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/result.h"
#include "store/store.h"

#define BD_RANGE_SNAPSHOT_KEYS (2u << 20) /* bucket keys: mode << 20 | prefix, two modes */
#define BD_RANGE_SNAPSHOT_FILE "ranges.snapshot"

/* ---- writing ---------------------------------------------------------------------- */

typedef struct bd_range_snapshot_writer bd_range_snapshot_writer;

/* Starts writing path (through path + ".tmp", created 0600). BD_ERR_IO or BD_ERR_NOMEM. */
bd_result bd_range_snapshot_writer_open(const char *path, bd_range_snapshot_writer **out);
/* Adds bucket key's blob; keys in strictly ascending order, below BD_RANGE_SNAPSHOT_KEYS
 * (BD_ERR_INVALID otherwise). An empty blob is no bucket. */
bd_result bd_range_snapshot_writer_add(bd_range_snapshot_writer *w, uint32_t key,
                                       const uint8_t *blob, size_t len);
/* Completes the file for range version: header and table written, synced, renamed over
 * path. Frees w whatever the result. */
bd_result bd_range_snapshot_writer_finish(bd_range_snapshot_writer *w, uint64_t version);
/* Drops an unfinished file. NULL is ignored. */
void bd_range_snapshot_writer_abort(bd_range_snapshot_writer *w);

/* Writes path from the store's ranges (bd_store_range_export); *version gets the range
 * version it holds. Gives up with BD_ERR_BUSY, leaving path as it was, once *stop is set
 * (may be NULL). The store's errors as it gives them; BD_ERR_IO for the file's. */
bd_result bd_range_snapshot_build(bd_store *s, const char *path, const atomic_bool *stop,
                                  uint64_t *version);

/* ---- reading ---------------------------------------------------------------------- */

typedef struct bd_range_snapshot bd_range_snapshot;

/* Maps path and checks it: BD_ERR_NOT_FOUND when there is no file, BD_ERR_STORE when it is
 * not a whole snapshot of this format (truncated, digests not matching). verify_blobs also
 * reads every blob against its digest (a file this process did not just write). The
 * result holds one reference. */
bd_result bd_range_snapshot_open(const char *path, bool verify_blobs, bd_range_snapshot **out);
uint64_t bd_range_snapshot_version(const bd_range_snapshot *s);
/* Calls cb for each hash of the bucket, in order, as bd_store_range_get does. */
bd_result bd_range_snapshot_get(const bd_range_snapshot *s, bd_range_mode mode, uint32_t prefix,
                                bd_range_cb cb, void *ctx);
/* Drops a reference; the last one unmaps. NULL is ignored. */
void bd_range_snapshot_release(bd_range_snapshot *s);

/* ---- the one served --------------------------------------------------------------- */

/* The process's published snapshot with a reference for the caller (release it), or NULL
 * while there is none. Safe from any thread. */
bd_range_snapshot *bd_range_snapshot_current(void);
/* Makes s (its reference passes to the publication; NULL: none) the one served from now on;
 * readers holding the previous one finish with it, the last of them unmaps it. */
void bd_range_snapshot_publish(bd_range_snapshot *s);

#endif
