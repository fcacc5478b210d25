/* The bytes of one import input: a file descriptor read as it is, or decompressed in
 * process (gzip/zlib, zstd, xz, bzip2), chosen by the magic bytes at its start: a compressed
 * stream is decompressed whatever its name, a plain file stays plain whatever its name.
 * Streams through one fixed input buffer: nothing is allocated after bd_source_open. The
 * source owns the descriptor when told so, its buffers and the decoder; bd_source_close
 * releases them. */
#ifndef BD_INGEST_SOURCE_H
#define BD_INGEST_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/result.h"

typedef enum { BD_SRC_PLAIN, BD_SRC_GZIP, BD_SRC_ZSTD, BD_SRC_XZ, BD_SRC_BZIP2 } bd_source_kind;

typedef struct bd_source bd_source;

/* The compression the first n bytes of an input announce (BD_SRC_PLAIN when none or when n
 * is too short to tell). */
bd_source_kind bd_source_sniff(const unsigned char *p, size_t n);
/* "plain", "gzip", "zstd", "xz", "bzip2". */
const char *bd_source_kind_name(bd_source_kind k);

/* What a decoder may ask for, by default: a compressed stream states how much memory its
 * decoding needs (xz: the dictionary, zstd: the window), up to gigabytes for a few bytes of
 * data, so more than this is refused instead of allocated. gzip (a 32 KiB window) and bzip2
 * (at most 900 KB blocks) need a small fixed amount and are not limited. */
#define BD_SOURCE_MEMORY_LIMIT_DEFAULT ((uint64_t)256 << 20)

/* Wraps fd (closed by bd_source_close when own_fd). Reads the first bytes to recognise a
 * compressed stream. memory_limit is the most, in bytes, the decoder may use (0: the
 * default above): liblzma's own accounting for xz; for zstd the window, which must be at
 * most the largest power of two within the limit. A stream over it fails at its header
 * with BD_ERR_IO, why naming the limit in MiB. Returns BD_OK with *out set; BD_ERR_IO (why
 * set) on a read error or a decoder that cannot start; BD_ERR_NOMEM. On failure nothing is
 * left to close except fd when !own_fd. */
bd_result bd_source_open_limited(int fd, bool own_fd, uint64_t memory_limit, bd_source **out,
                                 char *why, size_t whylen);
/* bd_source_open_limited with the default limit. */
bd_result bd_source_open(int fd, bool own_fd, bd_source **out, char *why, size_t whylen);

/* Opens path for reading (O_CLOEXEC): the descriptor, or -1 with why set ("cannot open
 * PATH: reason"). Unless follow_links, a path that is a symbolic link is opened only when the
 * link leads to a pipe or a socket (the /dev/fd/N by which a shell names <(...)), else
 * refused ("cannot open PATH: it is a symbolic link (--follow-links follows links)"): the
 * check is the open itself (O_NOFOLLOW), so a file swapped for a link after it was listed is
 * not read. Only the last component of path is checked. */
int bd_source_open_path(const char *path, bool follow_links, char *why, size_t whylen);

/* Reads up to cap decompressed bytes into dst: BD_OK with *got > 0, or *got == 0 at the end
 * of the input; BD_ERR_IO (why set) on a read error or corrupt or truncated compressed data
 * ("unexpected end of file" for a stream cut short), or a stream that needs more memory than
 * the limit ("... more than the limit of N MiB ..."). After BD_ERR_IO every later call fails
 * the same way. Several concatenated streams of one kind (gzip members, zstd frames, xz
 * streams, bzip2 streams) are read as one. */
bd_result bd_source_read(bd_source *s, char *dst, size_t cap, size_t *got, char *why,
                         size_t whylen);

bd_source_kind bd_source_kind_of(const bd_source *s);
/* Bytes taken from the descriptor so far (compressed bytes for a compressed input). */
uint64_t bd_source_raw_bytes(const bd_source *s);

/* Frees s and its decoder, closes fd when owned. NULL is a no-op. */
/* A plain file read in parallel (one source per thread on the same file): the source then
 * reads bytes [start, end) of it and ends there, with pread. false, and nothing changed, for
 * a compressed source or one that failed. */
bool bd_source_set_range(bd_source *s, uint64_t start, uint64_t end);
/* Cuts a plain file of size bytes into ranges of about step bytes each ending just after a
 * line break (the last at size): *out gets *n + 1 bounds, the first 0 and the last size
 * (malloc'd: the caller frees them). BD_ERR_INVALID for a compressed source. */
bd_result bd_source_line_bounds(bd_source *s, uint64_t size, uint64_t step, uint64_t **out,
                                size_t *n);

void bd_source_close(bd_source *s);

#endif
