/* Import input bytes: plain reads, or zlib / libzstd / liblzma / libbz2 streaming decoders
 * fed from one fixed input buffer. Each decoder is a `step` that turns some of the buffered
 * input into output; one loop (bd_source_read) refills the buffer, restarts a decoder after
 * each concatenated stream, and tells a truncated stream from the end of the input. */
#include "ingest/source.h"

#include <bzlib.h>
#include <errno.h>
#include <fcntl.h>
#include <lzma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

#define IN_CAP (128u * 1024)
#define SNIFF_LEN 10 /* bzip2: "BZh" level, then a 6-byte block or end-of-stream magic */

struct bd_source {
    int fd;
    bool own_fd;
    bd_source_kind kind;
    unsigned char *in; /* IN_CAP bytes; [in_pos, in_len) not yet decoded */
    size_t in_pos, in_len;
    bool in_eof;
    bool ended;            /* the decoder finished a stream; another may follow */
    bool live;             /* the decoder holds state to free */
    uint64_t memory_limit; /* bytes the decoder may use (source.h) */
    bd_result failed;
    char failed_why[200];
    uint64_t raw;
    /* a plain file read over one byte range (bd_source_set_range): pread from range_pos up
     * to range_end */
    bool ranged;
    uint64_t range_pos, range_end;
    z_stream z;
    ZSTD_DStream *zs;
    lzma_stream lz;
    bz_stream bz;
};

bd_source_kind bd_source_sniff(const unsigned char *p, size_t n)
{
    static const unsigned char xz[] = {0xfd, '7', 'z', 'X', 'Z', 0x00};
    static const unsigned char zst[] = {0x28, 0xb5, 0x2f, 0xfd};
    static const unsigned char bz_block[] = {0x31, 0x41, 0x59, 0x26, 0x53, 0x59};
    static const unsigned char bz_end[] = {0x17, 0x72, 0x45, 0x38, 0x50, 0x90};
    if (n >= 3 && p[0] == 0x1f && p[1] == 0x8b && p[2] == 8) /* deflate, the only method */
        return BD_SRC_GZIP;
    if (n >= sizeof zst && memcmp(p, zst, sizeof zst) == 0)
        return BD_SRC_ZSTD;
    if (n >= sizeof xz && memcmp(p, xz, sizeof xz) == 0)
        return BD_SRC_XZ;
    /* "BZh1" alone could start a line of text: the block (or empty-stream) magic decides */
    if (n >= 10 && memcmp(p, "BZh", 3) == 0 && p[3] >= '1' && p[3] <= '9' &&
        (memcmp(p + 4, bz_block, 6) == 0 || memcmp(p + 4, bz_end, 6) == 0))
        return BD_SRC_BZIP2;
    return BD_SRC_PLAIN;
}

const char *bd_source_kind_name(bd_source_kind k)
{
    static const char *const names[] = {"plain", "gzip", "zstd", "xz", "bzip2"};
    return (unsigned)k < sizeof names / sizeof names[0] ? names[k] : "";
}

static bd_result fail(bd_source *s, const char *fmt, const char *detail)
{
    s->failed = BD_ERR_IO;
    snprintf(s->failed_why, sizeof s->failed_why, fmt, bd_source_kind_name(s->kind), detail);
    return BD_ERR_IO;
}

/* Reads once into dst: BD_OK with *got (0 at the end), BD_ERR_IO. A ranged source reads with
 * pread, so that no file offset is shared, and stops at its range's end. */
static bd_result read_fd(bd_source *s, void *dst, size_t cap, size_t *got)
{
    *got = 0;
    if (s->ranged && cap > s->range_end - s->range_pos)
        cap = (size_t)(s->range_end - s->range_pos);
    if (s->ranged && cap == 0)
        return BD_OK;
    for (;;) {
        ssize_t n = s->ranged ? pread(s->fd, dst, cap, (off_t)s->range_pos) : read(s->fd, dst, cap);
        if (n >= 0) {
            *got = (size_t)n;
            s->raw += (uint64_t)n;
            s->range_pos += s->ranged ? (uint64_t)n : 0;
            return BD_OK;
        }
        if (errno != EINTR) {
            char err[128];
            if (strerror_r(errno, err, sizeof err) != 0)
                snprintf(err, sizeof err, "error %d", errno);
            s->failed = BD_ERR_IO;
            snprintf(s->failed_why, sizeof s->failed_why, "read error: %s", err);
            return BD_ERR_IO;
        }
    }
}

bool bd_source_set_range(bd_source *s, uint64_t start, uint64_t end)
{
    if (s->kind != BD_SRC_PLAIN || s->failed != BD_OK || end < start)
        return false;
    s->in_pos = s->in_len; /* the bytes read to sniff are the file's first: read again */
    s->ranged = true;
    s->range_pos = start;
    s->range_end = end;
    return true;
}

bd_result bd_source_line_bounds(bd_source *s, uint64_t size, uint64_t step, uint64_t **out,
                                size_t *n)
{
    *out = NULL;
    *n = 0;
    if (s->kind != BD_SRC_PLAIN || step == 0)
        return BD_ERR_INVALID;
    size_t cap = (size_t)(size / step) + 2;
    uint64_t *b = malloc(cap * sizeof *b);
    char *buf = malloc(IN_CAP);
    if (!b || !buf) {
        free(b);
        free(buf);
        return BD_ERR_NOMEM;
    }
    size_t k = 0;
    b[k++] = 0;
    /* each next bound: just past the first line break at or after a multiple of step, and
     * past the bound before it */
    for (uint64_t at = step; at < size && k < cap - 1;) {
        uint64_t from = at > b[k - 1] ? at - 1 : b[k - 1];
        uint64_t found = size;
        while (from < size) {
            ssize_t got = pread(s->fd, buf, IN_CAP, (off_t)from);
            if (got < 0 && errno == EINTR)
                continue;
            if (got <= 0)
                break;
            char *nl = memchr(buf, '\n', (size_t)got);
            if (nl) {
                found = from + (uint64_t)(nl - buf) + 1;
                break;
            }
            from += (uint64_t)got;
        }
        if (found >= size)
            break;
        b[k++] = found;
        at = found + step;
    }
    b[k++] = size;
    free(buf);
    *out = b;
    *n = k - 1;
    return BD_OK;
}

/* Refills the input buffer once it is used up. */
static bd_result refill(bd_source *s)
{
    if (s->in_pos < s->in_len || s->in_eof)
        return BD_OK;
    size_t got;
    bd_result r = read_fd(s, s->in, IN_CAP, &got);
    if (r != BD_OK)
        return r;
    s->in_pos = 0;
    s->in_len = got;
    s->in_eof = got == 0;
    return BD_OK;
}

/* ---- decoders: start, one step, end ----------------------------------------------- */

static bd_result start(bd_source *s)
{
    bool ok = false;
    switch (s->kind) {
    case BD_SRC_PLAIN:
        return BD_OK;
    case BD_SRC_GZIP:
        memset(&s->z, 0, sizeof s->z);
        ok = inflateInit2(&s->z, 15 + 16) == Z_OK;
        break;
    case BD_SRC_ZSTD: {
        /* the largest window within the limit: 2^log bytes, within what libzstd takes */
        ZSTD_bounds b = ZSTD_dParam_getBounds(ZSTD_d_windowLogMax);
        int log = b.lowerBound;
        while (log < b.upperBound && ((uint64_t)1 << (log + 1)) <= s->memory_limit)
            log++;
        s->zs = ZSTD_createDStream();
        ok = s->zs && !ZSTD_isError(ZSTD_initDStream(s->zs)) &&
             !ZSTD_isError(ZSTD_DCtx_setParameter(s->zs, ZSTD_d_windowLogMax, log));
        break;
    }
    case BD_SRC_XZ:
        s->lz = (lzma_stream)LZMA_STREAM_INIT;
        ok = lzma_stream_decoder(&s->lz, s->memory_limit, LZMA_CONCATENATED) == LZMA_OK;
        break;
    case BD_SRC_BZIP2:
        memset(&s->bz, 0, sizeof s->bz);
        ok = BZ2_bzDecompressInit(&s->bz, 0, 0) == BZ_OK;
        break;
    }
    s->live = ok;
    return ok ? BD_OK : fail(s, "cannot start the %s decoder%s", "");
}

static void end(bd_source *s)
{
    if (!s->live)
        return;
    switch (s->kind) {
    case BD_SRC_PLAIN:
        break;
    case BD_SRC_GZIP:
        inflateEnd(&s->z);
        break;
    case BD_SRC_ZSTD:
        ZSTD_freeDStream(s->zs);
        s->zs = NULL;
        break;
    case BD_SRC_XZ:
        lzma_end(&s->lz);
        break;
    case BD_SRC_BZIP2:
        BZ2_bzDecompressEnd(&s->bz);
        break;
    }
    s->live = false;
}

/* Prepares the decoder for the next concatenated stream. */
static bd_result restart(bd_source *s)
{
    if (s->kind == BD_SRC_GZIP)
        return inflateReset(&s->z) == Z_OK ? BD_OK : fail(s, "cannot restart the %s decoder%s", "");
    if (s->kind == BD_SRC_BZIP2) {
        end(s);
        return start(s);
    }
    return BD_OK; /* zstd goes on to the next frame by itself; xz is told LZMA_CONCATENATED */
}

static const char corrupt[] = "decompression failed: the %s data is corrupt (%s)";

/* Whole MiB, rounded up. */
static unsigned long long mib(uint64_t bytes)
{
    return (unsigned long long)(bytes / (1u << 20) + (bytes % (1u << 20) != 0));
}

/* A stream whose header asks for more memory than the limit: needed 0 when not known. */
static bd_result over_limit(bd_source *s, uint64_t needed)
{
    char need[64] = "more memory than the limit";
    if (needed)
        snprintf(need, sizeof need, "%llu MiB of memory, more than the limit", mib(needed));
    s->failed = BD_ERR_IO;
    snprintf(s->failed_why, sizeof s->failed_why,
             "decompression failed: the %s data needs %s of %llu MiB "
             "(--decompress-memory-limit raises it)",
             bd_source_kind_name(s->kind), need, mib(s->memory_limit));
    return BD_ERR_IO;
}

/* Decodes some buffered input into dst: *made bytes, *ended when a stream finished. */
static bd_result step(bd_source *s, char *dst, size_t cap, size_t *made, bool *ended)
{
    unsigned char *in = s->in + s->in_pos;
    size_t avail = s->in_len - s->in_pos, used = 0;
    if (cap > UINT32_MAX)
        cap = UINT32_MAX; /* zlib's and libbz2's counters are 32-bit */
    *made = 0;
    *ended = false;
    switch (s->kind) {
    case BD_SRC_PLAIN:
        break;
    case BD_SRC_GZIP: {
        s->z.next_in = in;
        s->z.avail_in = (uInt)avail;
        s->z.next_out = (unsigned char *)dst;
        s->z.avail_out = (uInt)cap;
        int ret = inflate(&s->z, Z_NO_FLUSH);
        used = avail - s->z.avail_in;
        *made = cap - s->z.avail_out;
        if (ret == Z_STREAM_END)
            *ended = true;
        else if (ret != Z_OK && ret != Z_BUF_ERROR)
            return fail(s, corrupt, s->z.msg ? s->z.msg : "zlib error");
        break;
    }
    case BD_SRC_ZSTD: {
        ZSTD_inBuffer ib = {in, avail, 0};
        ZSTD_outBuffer ob = {dst, cap, 0};
        size_t ret = ZSTD_decompressStream(s->zs, &ob, &ib);
        if (ZSTD_isError(ret) && ZSTD_getErrorCode(ret) == ZSTD_error_frameParameter_windowTooLarge)
            return over_limit(s, 0);
        if (ZSTD_isError(ret))
            return fail(s, corrupt, ZSTD_getErrorName(ret));
        used = ib.pos;
        *made = ob.pos;
        *ended = ret == 0;
        break;
    }
    case BD_SRC_XZ: {
        s->lz.next_in = in;
        s->lz.avail_in = avail;
        s->lz.next_out = (uint8_t *)dst;
        s->lz.avail_out = cap;
        lzma_ret ret = lzma_code(&s->lz, s->in_eof ? LZMA_FINISH : LZMA_RUN);
        used = avail - s->lz.avail_in;
        *made = cap - s->lz.avail_out;
        if (ret == LZMA_STREAM_END)
            *ended = true;
        else if (ret == LZMA_BUF_ERROR && s->in_eof && *made == 0)
            return fail(s,
                        "decompression failed: unexpected end of file (the %s data is "
                        "truncated)%s",
                        "");
        else if (ret == LZMA_MEMLIMIT_ERROR)
            return over_limit(s, lzma_memusage(&s->lz));
        else if (ret != LZMA_OK && ret != LZMA_BUF_ERROR)
            return fail(s, corrupt, ret == LZMA_MEM_ERROR ? "out of memory" : "liblzma error");
        break;
    }
    case BD_SRC_BZIP2: {
        s->bz.next_in = (char *)in;
        s->bz.avail_in = (unsigned)avail;
        s->bz.next_out = dst;
        s->bz.avail_out = (unsigned)cap;
        int ret = BZ2_bzDecompress(&s->bz);
        used = avail - s->bz.avail_in;
        *made = cap - s->bz.avail_out;
        if (ret == BZ_STREAM_END)
            *ended = true;
        else if (ret != BZ_OK)
            return fail(s, corrupt, "libbz2 error");
        break;
    }
    }
    s->in_pos += used;
    return BD_OK;
}

/* ---- the public side --------------------------------------------------------------- */

int bd_source_open_path(const char *path, bool follow_links, char *why, size_t whylen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | (follow_links ? 0 : O_NOFOLLOW));
    if (fd < 0 && errno == ELOOP && !follow_links) {
        /* a symbolic link: read only when it leads to a pipe or a socket (the shell's <(...)
         * names one by a link); O_NONBLOCK: opening what it leads to never waits */
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
        struct stat st;
        int flags = fd >= 0 ? fcntl(fd, F_GETFL) : -1;
        bool to_pipe = flags >= 0 && fstat(fd, &st) == 0 &&
                       (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)) &&
                       fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) == 0;
        if (!to_pipe) {
            if (fd >= 0)
                close(fd);
            bd_why(why, whylen,
                   "cannot open %s: it is a symbolic link (--follow-links follows links)", path);
            return -1;
        }
    }
    if (fd < 0) {
        char err[128];
        if (strerror_r(errno, err, sizeof err) != 0)
            snprintf(err, sizeof err, "error %d", errno);
        bd_why(why, whylen, "cannot open %s: %s", path, err);
    }
    return fd;
}

bd_result bd_source_open(int fd, bool own_fd, bd_source **out, char *why, size_t whylen)
{
    return bd_source_open_limited(fd, own_fd, 0, out, why, whylen);
}

bd_result bd_source_open_limited(int fd, bool own_fd, uint64_t memory_limit, bd_source **out,
                                 char *why, size_t whylen)
{
    *out = NULL;
    bd_source *s = calloc(1, sizeof *s);
    unsigned char *in = malloc(IN_CAP);
    if (!s || !in) {
        free(s);
        free(in);
        bd_why(why, whylen, "out of memory");
        return BD_ERR_NOMEM;
    }
    s->fd = fd;
    s->own_fd = own_fd;
    s->in = in;
    s->memory_limit = memory_limit ? memory_limit : BD_SOURCE_MEMORY_LIMIT_DEFAULT;
    /* the first bytes decide: read until SNIFF_LEN are in hand or the input ends (a pipe
     * may hand them over a few at a time) */
    while (s->in_len < SNIFF_LEN && !s->in_eof) {
        size_t got;
        if (read_fd(s, s->in + s->in_len, IN_CAP - s->in_len, &got) != BD_OK)
            goto fail;
        s->in_len += got;
        s->in_eof = got == 0;
    }
    s->kind = bd_source_sniff(s->in, s->in_len);
    if (start(s) != BD_OK)
        goto fail;
    *out = s;
    return BD_OK;
fail:
    bd_why(why, whylen, "%s", s->failed_why);
    s->own_fd = false; /* the caller still owns fd when opening fails */
    bd_source_close(s);
    return BD_ERR_IO;
}

bd_result bd_source_read(bd_source *s, char *dst, size_t cap, size_t *got, char *why, size_t whylen)
{
    *got = 0;
    if (s->failed != BD_OK)
        goto failed;
    if (s->kind == BD_SRC_PLAIN) {
        if (s->in_pos < s->in_len) { /* the bytes read to sniff */
            size_t n = s->in_len - s->in_pos < cap ? s->in_len - s->in_pos : cap;
            memcpy(dst, s->in + s->in_pos, n);
            s->in_pos += n;
            *got = n;
            return BD_OK;
        }
        if ((!s->ranged && s->in_eof) || read_fd(s, dst, cap, got) == BD_OK)
            return BD_OK;
        goto failed;
    }
    for (;;) {
        if (s->ended) { /* another stream, or the end */
            if (refill(s) != BD_OK)
                goto failed;
            if (s->in_pos == s->in_len)
                return BD_OK;
            if (restart(s) != BD_OK)
                goto failed;
            s->ended = false;
        }
        if (refill(s) != BD_OK)
            goto failed;
        size_t made;
        if (step(s, dst, cap, &made, &s->ended) != BD_OK)
            goto failed;
        if (made > 0) {
            *got = made;
            return BD_OK;
        }
        if (!s->ended && s->in_eof && s->in_pos == s->in_len && s->kind != BD_SRC_XZ) {
            fail(s, "decompression failed: unexpected end of file (the %s data is truncated)%s",
                 "");
            goto failed;
        }
    }
failed:
    bd_why(why, whylen, "%s", s->failed_why);
    return BD_ERR_IO;
}

bd_source_kind bd_source_kind_of(const bd_source *s)
{
    return s->kind;
}

uint64_t bd_source_raw_bytes(const bd_source *s)
{
    return s->raw;
}

void bd_source_close(bd_source *s)
{
    if (!s)
        return;
    end(s);
    if (s->own_fd && s->fd >= 0)
        close(s->fd);
    free(s->in);
    free(s);
}
