/* The password ranges' local snapshot file: writing, mapping, serving and swapping it (see
 * range_snapshot.h for the layout). */
#include "store/range_snapshot.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <pthread.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/log.h"
#include "store/ranges.h"

#define FORMAT 2u
#define DIGEST 32
#define WRITE_CHUNK (1u << 20)
#define SUFFIX_MAX 35 /* hex digits after the prefix: SHA-1 35, NTLM 27 */

static const char MAGIC[8] = {'B', 'D', 'R', 'S', 'N', 'A', 'P', 2};

/* ---- the answer's lines ------------------------------------------------------------ */

/* Each byte as two upper-case hex digits. */
/* clang-format off */
static const char BYTE_HEX[256][2] = {
#define ROW(h) \
    {h, '0'}, {h, '1'}, {h, '2'}, {h, '3'}, {h, '4'}, {h, '5'}, {h, '6'}, {h, '7'}, \
    {h, '8'}, {h, '9'}, {h, 'A'}, {h, 'B'}, {h, 'C'}, {h, 'D'}, {h, 'E'}, {h, 'F'}
    ROW('0'), ROW('1'), ROW('2'), ROW('3'), ROW('4'), ROW('5'), ROW('6'), ROW('7'),
    ROW('8'), ROW('9'), ROW('A'), ROW('B'), ROW('C'), ROW('D'), ROW('E'), ROW('F'),
#undef ROW
};
/* clang-format on */

/* One line per hash, CRLF before every line but the first, appended in one piece: the
 * hash's hex digits from the sixth on (the low half of byte 2, then whole bytes). */
bd_result bd_range_line_append(bd_buf *out, bd_range_mode mode, const uint8_t *hash,
                               uint32_t count, bool first)
{
    char line[2 + SUFFIX_MAX + 1 + 24], num[24];
    size_t digits = mode == BD_RANGE_SHA1 ? 35 : 27;
    size_t n = first ? 0 : 2;
    memcpy(line, "\r\n", 2);
    line[n] = BYTE_HEX[hash[2]][1];
    for (size_t i = 3, d = 1; d < digits; i++, d += 2)
        memcpy(line + n + d, BYTE_HEX[hash[i]], 2);
    n += digits;
    line[n++] = ':';
    if (count < 10) {
        line[n++] = (char)('0' + count);
    } else {
        const char *c = bd_i64_text(count, num);
        size_t cl = (size_t)(num + sizeof num - 1 - c);
        memcpy(line + n, c, cl);
        n += cl;
    }
    return bd_buf_append(out, line, n);
}

typedef struct {
    char magic[8];
    uint32_t format;
    uint32_t keys;
    uint64_t version;
    uint64_t text_bytes;
    uint8_t text_digest[DIGEST];
    uint8_t head_digest[DIGEST]; /* of this header (this field zeroed) and both tables */
} file_header;

_Static_assert(sizeof(file_header) == 96, "the header is 96 bytes");

#define TABLE_BYTES (((size_t)BD_RANGE_SNAPSHOT_KEYS + 1) * sizeof(uint64_t))
#define LINES_BYTES ((size_t)BD_RANGE_SNAPSHOT_KEYS * sizeof(uint32_t))
#define DATA_AT (sizeof(file_header) + TABLE_BYTES + LINES_BYTES)

static void head_digest(const file_header *h, const uint64_t *table, const uint32_t *lines,
                        uint8_t out[DIGEST])
{
    file_header copy = *h;
    memset(copy.head_digest, 0, DIGEST);
    crypto_generichash_state st;
    crypto_generichash_init(&st, NULL, 0, DIGEST);
    crypto_generichash_update(&st, (const unsigned char *)&copy, sizeof copy);
    crypto_generichash_update(&st, (const unsigned char *)table, TABLE_BYTES);
    crypto_generichash_update(&st, (const unsigned char *)lines, LINES_BYTES);
    crypto_generichash_final(&st, out, DIGEST);
}

/* ---- writing ---------------------------------------------------------------------- */

struct bd_range_snapshot_writer {
    int fd;
    char *path, *tmp;
    uint64_t *table; /* BD_RANGE_SNAPSHOT_KEYS + 1 */
    uint32_t *lines; /* BD_RANGE_SNAPSHOT_KEYS */
    uint32_t next;   /* keys below it have their offset */
    uint64_t at;     /* text bytes so far */
    bd_buf pending;  /* text not yet written */
    crypto_generichash_state text;
};

static bool write_all(int fd, const void *data, size_t n, off_t at)
{
    const char *p = data;
    while (n > 0) {
        ssize_t k = pwrite(fd, p, n, at);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return false;
        p += k;
        n -= (size_t)k;
        at += k;
    }
    return true;
}

static bd_result flush_pending(bd_range_snapshot_writer *w)
{
    off_t at = (off_t)(DATA_AT + w->at - w->pending.len);
    if (!write_all(w->fd, w->pending.data, w->pending.len, at))
        return BD_ERR_IO;
    bd_buf_reset(&w->pending);
    return BD_OK;
}

static void writer_free(bd_range_snapshot_writer *w)
{
    if (w->fd >= 0)
        close(w->fd);
    free(w->path);
    free(w->tmp);
    free(w->table);
    free(w->lines);
    bd_buf_free(&w->pending);
    free(w);
}

bd_result bd_range_snapshot_writer_open(const char *path, bd_range_snapshot_writer **out)
{
    *out = NULL;
    if (sodium_init() < 0)
        return BD_ERR_CRYPTO;
    /* the hash state asks for 64-byte alignment */
    size_t size = (sizeof(bd_range_snapshot_writer) + 63) / 64 * 64;
    bd_range_snapshot_writer *w = aligned_alloc(64, size);
    if (!w)
        return BD_ERR_NOMEM;
    memset(w, 0, size);
    w->fd = -1;
    bd_buf_init(&w->pending, 2 * (size_t)WRITE_CHUNK + (64u << 20));
    size_t n = strlen(path);
    w->path = strdup(path);
    w->tmp = malloc(n + 5);
    w->table = calloc((size_t)BD_RANGE_SNAPSHOT_KEYS + 1, sizeof(uint64_t));
    w->lines = calloc(BD_RANGE_SNAPSHOT_KEYS, sizeof(uint32_t));
    if (!w->path || !w->tmp || !w->table || !w->lines) {
        writer_free(w);
        return BD_ERR_NOMEM;
    }
    memcpy(w->tmp, path, n);
    memcpy(w->tmp + n, ".tmp", 5);
    w->fd = open(w->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (w->fd < 0) {
        bd_log_own(BD_LOG_ERROR, "ranges", "cannot write the range snapshot %s: %s", w->tmp,
                   strerror(errno));
        writer_free(w);
        return BD_ERR_IO;
    }
    crypto_generichash_init(&w->text, NULL, 0, DIGEST);
    *out = w;
    return BD_OK;
}

/* The bucket's lines after what w->pending holds. */
typedef struct {
    bd_range_snapshot_writer *w;
    bd_range_mode mode;
    uint32_t lines;
    bd_result r;
} bucket_text;

static int add_line(void *ctx, const uint8_t *hash, uint32_t count)
{
    bucket_text *b = ctx;
    b->r = bd_range_line_append(&b->w->pending, b->mode, hash, count, b->lines == 0);
    b->lines++;
    return b->r != BD_OK;
}

bd_result bd_range_snapshot_writer_add(bd_range_snapshot_writer *w, uint32_t key,
                                       const uint8_t *blob, size_t len)
{
    if (key < w->next || key >= BD_RANGE_SNAPSHOT_KEYS)
        return BD_ERR_INVALID;
    while (w->next <= key)
        w->table[w->next++] = w->at;
    if (len == 0)
        return BD_OK;
    size_t from = w->pending.len;
    bucket_text b = {.w = w, .mode = key >> 20 ? BD_RANGE_NTLM : BD_RANGE_SHA1, .r = BD_OK};
    bd_result r = bd_range_decode(key, blob, len, add_line, &b);
    if (r == BD_OK)
        r = b.r;
    if (r != BD_OK) {
        bd_buf_truncate(&w->pending, from);
        return r;
    }
    size_t n = w->pending.len - from;
    crypto_generichash_update(&w->text, (const unsigned char *)w->pending.data + from, n);
    w->at += n;
    w->lines[key] = b.lines;
    if (w->pending.len >= WRITE_CHUNK)
        r = flush_pending(w);
    return r;
}

void bd_range_snapshot_writer_abort(bd_range_snapshot_writer *w)
{
    if (!w)
        return;
    unlink(w->tmp);
    writer_free(w);
}

/* Syncs the directory holding path, so that the rename survives a crash. */
static void sync_dir(const char *path)
{
    char *copy = strdup(path);
    if (!copy)
        return;
    int fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
    free(copy);
}

bd_result bd_range_snapshot_writer_finish(bd_range_snapshot_writer *w, uint64_t version)
{
    while (w->next <= BD_RANGE_SNAPSHOT_KEYS)
        w->table[w->next++] = w->at;
    file_header h = {.format = FORMAT, .keys = BD_RANGE_SNAPSHOT_KEYS, .version = version,
                     .text_bytes = w->at};
    memcpy(h.magic, MAGIC, sizeof MAGIC);
    crypto_generichash_final(&w->text, h.text_digest, DIGEST);
    head_digest(&h, w->table, w->lines, h.head_digest);
    bd_result r = flush_pending(w);
    if (r == BD_OK && !(write_all(w->fd, &h, sizeof h, 0) &&
                        write_all(w->fd, w->table, TABLE_BYTES, (off_t)sizeof h) &&
                        write_all(w->fd, w->lines, LINES_BYTES,
                                  (off_t)(sizeof h + TABLE_BYTES)) &&
                        fdatasync(w->fd) == 0 && rename(w->tmp, w->path) == 0))
        r = BD_ERR_IO;
    if (r != BD_OK) {
        bd_log_own(BD_LOG_ERROR, "ranges", "cannot write the range snapshot %s: %s", w->tmp,
                   strerror(errno));
        bd_range_snapshot_writer_abort(w);
        return r;
    }
    sync_dir(w->path);
    writer_free(w);
    return BD_OK;
}

typedef struct {
    bd_range_snapshot_writer *w;
    const atomic_bool *stop;
    bd_result r;
} build_ctx;

static int build_bucket(void *ctx, uint32_t key, const uint8_t *blob, size_t len)
{
    build_ctx *b = ctx;
    if (b->stop && atomic_load(b->stop))
        b->r = BD_ERR_BUSY;
    else
        b->r = bd_range_snapshot_writer_add(b->w, key, blob, len);
    return b->r != BD_OK;
}

bd_result bd_range_snapshot_build(bd_store *s, const char *path, const atomic_bool *stop,
                                  uint64_t *version)
{
    build_ctx b = {.stop = stop, .r = BD_OK};
    bd_result r = bd_range_snapshot_writer_open(path, &b.w);
    if (r != BD_OK)
        return r;
    r = bd_store_range_export(s, version, build_bucket, &b);
    if (r == BD_OK)
        r = b.r;
    if (r != BD_OK) {
        bd_range_snapshot_writer_abort(b.w);
        return r;
    }
    return bd_range_snapshot_writer_finish(b.w, *version);
}

/* ---- reading ---------------------------------------------------------------------- */

struct bd_range_snapshot {
    const uint8_t *map;
    size_t size;
    const file_header *h;
    const uint64_t *table;
    const uint32_t *lines;
    const char *text;
    atomic_long refs;
};

static bool well_formed(const uint8_t *map, size_t size, bool verify_text)
{
    if (size < DATA_AT)
        return false;
    const file_header *h = (const file_header *)map;
    if (memcmp(h->magic, MAGIC, sizeof MAGIC) != 0 || h->format != FORMAT ||
        h->keys != BD_RANGE_SNAPSHOT_KEYS || h->text_bytes != size - DATA_AT)
        return false;
    const uint64_t *table = (const uint64_t *)(map + sizeof *h);
    const uint32_t *lines = (const uint32_t *)(map + sizeof *h + TABLE_BYTES);
    uint8_t d[DIGEST];
    head_digest(h, table, lines, d);
    if (sodium_memcmp(d, h->head_digest, DIGEST) != 0)
        return false;
    if (table[0] != 0 || table[BD_RANGE_SNAPSHOT_KEYS] != h->text_bytes)
        return false;
    for (uint32_t k = 0; k < BD_RANGE_SNAPSHOT_KEYS; k++)
        if (table[k + 1] < table[k] || (table[k + 1] == table[k]) != (lines[k] == 0))
            return false;
    if (verify_text) {
        crypto_generichash(d, DIGEST, map + DATA_AT, h->text_bytes, NULL, 0);
        if (sodium_memcmp(d, h->text_digest, DIGEST) != 0)
            return false;
    }
    return true;
}

bd_result bd_range_snapshot_open(const char *path, bool verify_text, bd_range_snapshot **out)
{
    *out = NULL;
    if (sodium_init() < 0)
        return BD_ERR_CRYPTO;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? BD_ERR_NOT_FOUND : BD_ERR_IO;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return BD_ERR_IO;
    }
    if ((uint64_t)st.st_size < DATA_AT) {
        close(fd);
        return BD_ERR_STORE;
    }
    void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (map == MAP_FAILED)
        return BD_ERR_IO;
    if (!well_formed(map, (size_t)st.st_size, verify_text)) {
        munmap(map, (size_t)st.st_size);
        return BD_ERR_STORE;
    }
    bd_range_snapshot *s = calloc(1, sizeof *s);
    if (!s) {
        munmap(map, (size_t)st.st_size);
        return BD_ERR_NOMEM;
    }
    s->map = map;
    s->size = (size_t)st.st_size;
    s->h = map;
    s->table = (const uint64_t *)(s->map + sizeof(file_header));
    s->lines = (const uint32_t *)(s->map + sizeof(file_header) + TABLE_BYTES);
    s->text = (const char *)s->map + DATA_AT;
    atomic_init(&s->refs, 1);
    *out = s;
    return BD_OK;
}

uint64_t bd_range_snapshot_version(const bd_range_snapshot *s)
{
    return s->h->version;
}

bd_result bd_range_snapshot_get(const bd_range_snapshot *s, bd_range_mode mode, uint32_t prefix,
                                bd_slice *text, uint32_t *lines)
{
    if ((mode != BD_RANGE_SHA1 && mode != BD_RANGE_NTLM) || prefix > BD_RANGE_PREFIX_MAX)
        return BD_ERR_INVALID;
    uint32_t key = BD_RANGE_KEY(mode, prefix);
    uint64_t at = s->table[key];
    *text = (bd_slice){s->text + at, (size_t)(s->table[key + 1] - at)};
    *lines = s->lines[key];
    return BD_OK;
}

void bd_range_snapshot_release(bd_range_snapshot *s)
{
    if (!s || atomic_fetch_sub(&s->refs, 1) != 1)
        return;
    munmap((void *)s->map, s->size);
    free(s);
}

/* ---- the one served --------------------------------------------------------------- */

static pthread_mutex_t current_lock = PTHREAD_MUTEX_INITIALIZER;
static bd_range_snapshot *current;

bd_range_snapshot *bd_range_snapshot_current(void)
{
    pthread_mutex_lock(&current_lock);
    bd_range_snapshot *s = current;
    if (s)
        atomic_fetch_add(&s->refs, 1);
    pthread_mutex_unlock(&current_lock);
    return s;
}

void bd_range_snapshot_publish(bd_range_snapshot *s)
{
    pthread_mutex_lock(&current_lock);
    bd_range_snapshot *old = current;
    current = s;
    pthread_mutex_unlock(&current_lock);
    bd_range_snapshot_release(old);
}
