/* A local copy of a store's password ranges that a server serves /range/ from: written after
 * each range version (bd_store_range_version) from one consistent read of the store, mapped
 * (mmap), and swapped in whole when the version changes, so that a range request on a
 * database server costs what it costs on SQLite (one lookup in a table and one pass over a
 * bucket's blob) instead of a round trip to the database. app/svc_range_snapshot.c keeps it
 * up to date; hibp/ranges.c serves from the one published here, or from the store while
 * none is.
 *
 * The file holds each bucket's answer already written, so that a request copies it instead
 * of decoding a blob and formatting its hashes (at Pwned Passwords' density, 900 lines of
 * 35 hex digits: most of a request's CPU). Host byte order: a cache of one machine, never
 * copied to another.
 *     header, 96 bytes: magic "BDRSNAP\2"; format (uint32, 2); keys (uint32, 2^21: every
 *         bucket key of both modes, store/ranges.h); the range version (uint64); the text's
 *         bytes (uint64); the BLAKE2b-256 of the text; the BLAKE2b-256 of the header (this
 *         field zeroed) and both tables
 *     offset table: keys + 1 uint64, the answer of bucket key k is [off[k], off[k+1]) of
 *         the text
 *     line table: keys uint32, the lines of each answer
 *     the text: each bucket's answer as /range/ sends it without padding ("SUFFIX:COUNT"
 *         lines, upper-case hex, CRLF between them, none after the last), in key order.
 * About 39 bytes per SHA-1 hash and 31 per NTLM hash, against 19 and 15 in the store.
 * A file is written under a temporary name, synced and renamed over the old one, so a crash
 * leaves either file whole; a mapped file stays readable after a newer one replaced its name.
 * One that is truncated, of another format or whose digests do not match is refused. */
#ifndef BD_STORE_RANGE_SNAPSHOT_H
#define BD_STORE_RANGE_SNAPSHOT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/result.h"
#include "core/slice.h"
#include "store/store.h"

#define BD_RANGE_SNAPSHOT_KEYS (2u << 20) /* bucket keys: mode << 20 | prefix, two modes */
#define BD_RANGE_SNAPSHOT_FILE "ranges.snapshot"

/* ---- writing ---------------------------------------------------------------------- */

typedef struct bd_range_snapshot_writer bd_range_snapshot_writer;

/* Starts writing path (through path + ".tmp", created 0600). BD_ERR_IO or BD_ERR_NOMEM. */
bd_result bd_range_snapshot_writer_open(const char *path, bd_range_snapshot_writer **out);
/* Adds bucket key's blob (as the store keeps it), written out as its answer; keys in strictly
 * ascending order, below BD_RANGE_SNAPSHOT_KEYS (BD_ERR_INVALID otherwise). An empty blob is
 * no bucket; BD_ERR_STORE for a malformed one. */
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
 * not a whole snapshot of this format (truncated, digests not matching). verify_text also
 * reads the whole text against its digest (a file this process did not just write). The
 * result holds one reference. */
bd_result bd_range_snapshot_open(const char *path, bool verify_text, bd_range_snapshot **out);
uint64_t bd_range_snapshot_version(const bd_range_snapshot *s);
/* The answer of the bucket (valid while the reference is held; empty when no hash has the
 * prefix) and its number of lines. BD_ERR_INVALID for a mode or prefix out of range. */
bd_result bd_range_snapshot_get(const bd_range_snapshot *s, bd_range_mode mode, uint32_t prefix,
                                bd_slice *text, uint32_t *lines);

/* ---- the answer's lines ------------------------------------------------------------ */

/* Appends one line of an answer, "SUFFIX:COUNT" (the hash's hex digits after the prefix's
 * 5: 35 for SHA-1, 27 for NTLM), after CRLF unless first. The one writer of /range/'s lines,
 * live (hibp/ranges.c) and in the snapshot. */
bd_result bd_range_line_append(bd_buf *out, bd_range_mode mode, const uint8_t *hash,
                               uint32_t count, bool first);
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
