/* Tests for the decompressing input: each kind recognised by its magic bytes, streamed
 * through small and large reads, concatenated streams, truncation and corruption. */
#include "ingest/source.h"

#include <bzlib.h>
#include <lzma.h>
#include <stdlib.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "test.h"

static char why[256];

/* The payload: lines of text, 300 KiB, compressible but not trivially. */
static char *payload(size_t *len)
{
    size_t cap = 300 * 1024, n = 0;
    char *p = malloc(cap + 64);
    for (unsigned i = 0; n < cap; i++)
        n += (size_t)snprintf(p + n, 64, "user%u@example.com:pw%u\n", i, i * 7919u % 10007u);
    *len = n;
    return p;
}

/* Compresses src into a new buffer of the given kind; *n its length. */
static unsigned char *compress_as(bd_source_kind k, const char *src, size_t len, size_t *n)
{
    size_t cap = len + len / 2 + 1024;
    unsigned char *out = malloc(cap);
    *n = 0;
    if (k == BD_SRC_GZIP) {
        z_stream z = {0};
        deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
        z.next_in = (unsigned char *)src;
        z.avail_in = (uInt)len;
        z.next_out = out;
        z.avail_out = (uInt)cap;
        deflate(&z, Z_FINISH);
        *n = cap - z.avail_out;
        deflateEnd(&z);
    } else if (k == BD_SRC_ZSTD) {
        *n = ZSTD_compress(out, cap, src, len, 3);
    } else if (k == BD_SRC_XZ) {
        lzma_easy_buffer_encode(1, LZMA_CHECK_CRC64, NULL, (const uint8_t *)src, len, out, n, cap);
    } else if (k == BD_SRC_BZIP2) {
        unsigned int dn = (unsigned int)cap;
        BZ2_bzBuffToBuffCompress((char *)out, &dn, (char *)src, (unsigned)len, 9, 0, 0);
        *n = dn;
    } else {
        memcpy(out, src, len);
        *n = len;
    }
    return out;
}

/* A descriptor reading the given bytes (an unlinked temporary file). */
static int fd_of(const void *p, size_t n)
{
    FILE *f = tmpfile();
    if (!f || fwrite(p, 1, n, f) != n || fflush(f) != 0)
        return -1;
    int fd = dup(fileno(f));
    fclose(f);
    lseek(fd, 0, SEEK_SET);
    return fd;
}

/* The decoders' memory limit read_all opens with (0: bd_source_open, the default). */
static uint64_t limit;

/* Reads everything with reads of at most cap bytes: the result, *out and *outlen. */
static bd_result read_all(int fd, size_t cap, bd_source_kind *kind, char **out, size_t *outlen)
{
    bd_source *s;
    bd_result r = limit ? bd_source_open_limited(fd, true, limit, &s, why, sizeof why)
                        : bd_source_open(fd, true, &s, why, sizeof why);
    if (r != BD_OK)
        return r;
    *kind = bd_source_kind_of(s);
    size_t n = 0, room = 1 << 20;
    char *buf = malloc(room), *chunk = malloc(cap);
    size_t got;
    while ((r = bd_source_read(s, chunk, cap, &got, why, sizeof why)) == BD_OK && got) {
        if (n + got > room)
            buf = realloc(buf, room *= 2);
        memcpy(buf + n, chunk, got);
        n += got;
    }
    free(chunk);
    bd_source_close(s);
    *out = buf;
    *outlen = n;
    return r;
}

TEST(test_every_kind_is_recognised_by_its_magic_and_read_back_exactly)
{
    size_t len;
    char *text = payload(&len);
    for (int k = BD_SRC_PLAIN; k <= BD_SRC_BZIP2; k++) {
        size_t n;
        unsigned char *z = compress_as((bd_source_kind)k, text, len, &n);
        size_t caps[] = {7, 4096, 256 * 1024};
        for (size_t c = 0; c < 3; c++) {
            char *out;
            size_t outlen;
            bd_source_kind got;
            CHECK_INT(read_all(fd_of(z, n), caps[c], &got, &out, &outlen), BD_OK);
            CHECK_INT(got, k);
            CHECK_INT(outlen, len);
            CHECK(outlen == len && memcmp(out, text, len) == 0);
            free(out);
        }
        free(z);
    }
    free(text);
}

TEST(test_concatenated_streams_read_as_one)
{
    const char *part = "first:part\nsecond:part\n";
    size_t len = strlen(part);
    for (int k = BD_SRC_GZIP; k <= BD_SRC_BZIP2; k++) {
        size_t n1, n2;
        unsigned char *a = compress_as((bd_source_kind)k, part, len, &n1);
        unsigned char *b = compress_as((bd_source_kind)k, part, len, &n2);
        unsigned char *both = malloc(n1 + n2);
        memcpy(both, a, n1);
        memcpy(both + n1, b, n2);
        char *out;
        size_t outlen;
        bd_source_kind got;
        CHECK_INT(read_all(fd_of(both, n1 + n2), 5, &got, &out, &outlen), BD_OK);
        CHECK_INT(outlen, 2 * len);
        CHECK(outlen == 2 * len && memcmp(out, part, len) == 0 &&
              memcmp(out + len, part, len) == 0);
        free(out);
        free(both);
        free(a);
        free(b);
    }
}

TEST(test_a_truncated_stream_is_an_unexpected_end_of_file)
{
    size_t len;
    char *text = payload(&len);
    for (int k = BD_SRC_GZIP; k <= BD_SRC_BZIP2; k++) {
        size_t n;
        unsigned char *z = compress_as((bd_source_kind)k, text, len, &n);
        char *out;
        size_t outlen;
        bd_source_kind got;
        why[0] = '\0';
        CHECK_INT(read_all(fd_of(z, n / 2), 65536, &got, &out, &outlen), BD_ERR_IO);
        CHECK(strstr(why, "unexpected end of file") != NULL);
        CHECK(outlen < len && memcmp(out, text, outlen) == 0); /* what came before is intact */
        free(out);
        free(z);
    }
    free(text);
}

TEST(test_corrupt_data_is_an_io_error_naming_the_kind)
{
    size_t len;
    char *text = payload(&len);
    static const char *const names[] = {"", "gzip", "zstd", "xz", "bzip2"};
    for (int k = BD_SRC_GZIP; k <= BD_SRC_BZIP2; k++) {
        size_t n;
        unsigned char *z = compress_as((bd_source_kind)k, text, len, &n);
        for (size_t i = 20; i < n - 8; i += 97)
            z[i] ^= 0x5a;
        char *out;
        size_t outlen;
        bd_source_kind got;
        why[0] = '\0';
        CHECK_INT(read_all(fd_of(z, n), 65536, &got, &out, &outlen), BD_ERR_IO);
        CHECK(strstr(why, names[k]) != NULL);
        free(out);
        free(z);
    }
    free(text);
}

TEST(test_text_that_looks_a_little_like_magic_stays_plain)
{
    CHECK_INT(bd_source_sniff((const unsigned char *)"BZh9 is a word", 14), BD_SRC_PLAIN);
    CHECK_INT(bd_source_sniff((const unsigned char *)"\x1f\x8b", 2), BD_SRC_PLAIN);
    CHECK_INT(bd_source_sniff((const unsigned char *)"", 0), BD_SRC_PLAIN);
    char *out;
    size_t outlen;
    bd_source_kind got;
    CHECK_INT(read_all(fd_of("BZh", 3), 2, &got, &out, &outlen), BD_OK);
    CHECK_INT(got, BD_SRC_PLAIN);
    CHECK(outlen == 3 && memcmp(out, "BZh", 3) == 0);
    free(out);
    CHECK_INT(read_all(fd_of("", 0), 2, &got, &out, &outlen), BD_OK);
    CHECK_INT(outlen, 0);
    free(out);
}

/* An xz stream of text whose block header declares an LZMA2 dictionary of (2 | (code & 1))
 * << (code / 2 + 11) bytes (code 40: 4 GiB - 1), its CRC32 made right again: what a
 * decoder without a memory limit would allocate before reading a byte of the data. */
static unsigned char *xz_declaring(unsigned code, const char *text, size_t *n)
{
    unsigned char *z = compress_as(BD_SRC_XZ, text, strlen(text), n);
    size_t at = 12, size = ((size_t)z[at] + 1) * 4, p = at + 2;
    unsigned flags = z[at + 1];
    for (unsigned bit = 0x40; bit <= 0x80; bit <<= 1) /* compressed, uncompressed size */
        if (flags & bit) {
            while (z[p] & 0x80)
                p++;
            p++;
        }
    CHECK_INT(z[p], 0x21);  /* LZMA2 */
    CHECK_INT(z[p + 1], 1); /* one byte of properties: the dictionary size */
    z[p + 2] = (unsigned char)code;
    uint32_t crc = lzma_crc32(z + at, size - 4, 0);
    for (int i = 0; i < 4; i++)
        z[at + size - 4 + (size_t)i] = (unsigned char)(crc >> (8 * i));
    return z;
}

/* A zstd frame (RFC 8878) holding text in one raw block, its window descriptor byte wd
 * (exponent << 3 | mantissa: a window of 2^(10 + exponent) bytes plus eighths). */
static unsigned char *zstd_declaring(unsigned wd, const char *text, size_t *n)
{
    size_t len = strlen(text);
    unsigned char *z = malloc(len + 9);
    memcpy(z, "\x28\xb5\x2f\xfd", 4);
    z[4] = 0x00; /* not single-segment: a window descriptor follows; no checksum */
    z[5] = (unsigned char)wd;
    uint32_t block = 1u | (uint32_t)len << 3; /* the last block, raw */
    for (int i = 0; i < 3; i++)
        z[6 + i] = (unsigned char)(block >> (8 * i));
    memcpy(z + 9, text, len);
    *n = len + 9;
    return z;
}

TEST(test_a_huge_declared_xz_dictionary_is_refused_naming_the_limit)
{
    const char *text = "ann@example.com:pw1\n";
    char *out;
    size_t n, outlen;
    bd_source_kind got;
    unsigned char *z = xz_declaring(16, text, &n); /* honest: 1 MiB */
    CHECK_INT(read_all(fd_of(z, n), 4096, &got, &out, &outlen), BD_OK);
    CHECK(outlen == strlen(text) && memcmp(out, text, outlen) == 0);
    free(out);
    free(z);
    z = xz_declaring(36, text, &n); /* 1 GiB */
    why[0] = '\0';
    CHECK_INT(read_all(fd_of(z, n), 4096, &got, &out, &outlen), BD_ERR_IO);
    CHECK_STR(why, "decompression failed: the xz data needs 1025 MiB of memory, more than the "
                   "limit of 256 MiB (--decompress-memory-limit raises it)");
    CHECK_INT(outlen, 0);
    free(out);
    free(z);
}

TEST(test_a_huge_declared_zstd_window_is_refused_naming_the_limit)
{
    const char *text = "ann@example.com:pw1\n";
    char *out;
    size_t n, outlen;
    bd_source_kind got;
    unsigned char *z = zstd_declaring(10u << 3, text, &n); /* 1 MiB */
    CHECK_INT(read_all(fd_of(z, n), 4096, &got, &out, &outlen), BD_OK);
    CHECK(outlen == strlen(text) && memcmp(out, text, outlen) == 0);
    free(out);
    free(z);
    z = zstd_declaring(20u << 3, text, &n); /* 1 GiB */
    why[0] = '\0';
    CHECK_INT(read_all(fd_of(z, n), 4096, &got, &out, &outlen), BD_ERR_IO);
    CHECK_STR(why, "decompression failed: the zstd data needs more memory than the limit of "
                   "256 MiB (--decompress-memory-limit raises it)");
    CHECK_INT(outlen, 0);
    free(out);
    free(z);
}

TEST(test_the_memory_limit_can_be_set_either_way)
{
    const char *text = "ann@example.com:pw1\n";
    char *out;
    size_t n, outlen;
    bd_source_kind got;
    unsigned char *x = xz_declaring(16, text, &n); /* a 1 MiB dictionary, ~1.1 MiB in all */
    limit = (uint64_t)1 << 20;
    CHECK_INT(read_all(fd_of(x, n), 4096, &got, &out, &outlen), BD_ERR_IO);
    CHECK_STR(why, "decompression failed: the xz data needs 2 MiB of memory, more than the "
                   "limit of 1 MiB (--decompress-memory-limit raises it)");
    free(out);
    limit = (uint64_t)2 << 20;
    CHECK_INT(read_all(fd_of(x, n), 4096, &got, &out, &outlen), BD_OK);
    CHECK(outlen == strlen(text) && memcmp(out, text, outlen) == 0);
    free(out);
    free(x);
    unsigned char *z = zstd_declaring(11u << 3, text, &n); /* a 2 MiB window */
    limit = (uint64_t)2 << 20;
    CHECK_INT(read_all(fd_of(z, n), 4096, &got, &out, &outlen), BD_OK);
    CHECK(outlen == strlen(text) && memcmp(out, text, outlen) == 0);
    free(out);
    limit = (uint64_t)3 << 20; /* the window is a power of two within it: 2 MiB */
    free(z);
    z = zstd_declaring(11u << 3 | 1, text, &n); /* 2.25 MiB */
    CHECK_INT(read_all(fd_of(z, n), 4096, &got, &out, &outlen), BD_ERR_IO);
    CHECK_STR(why, "decompression failed: the zstd data needs more memory than the limit of "
                   "3 MiB (--decompress-memory-limit raises it)");
    free(out);
    free(z);
    limit = 0;
}

int main(void)
{
    RUN(test_every_kind_is_recognised_by_its_magic_and_read_back_exactly);
    RUN(test_concatenated_streams_read_as_one);
    RUN(test_a_truncated_stream_is_an_unexpected_end_of_file);
    RUN(test_corrupt_data_is_an_io_error_naming_the_kind);
    RUN(test_text_that_looks_a_little_like_magic_stays_plain);
    RUN(test_a_huge_declared_xz_dictionary_is_refused_naming_the_limit);
    RUN(test_a_huge_declared_zstd_window_is_refused_naming_the_limit);
    RUN(test_the_memory_limit_can_be_set_either_way);
    return TEST_EXIT();
}
