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

#define FORMAT 1u
#define DIGEST 32
#define WRITE_CHUNK (1u << 20)

static const char MAGIC[8] = {'B', 'D', 'R', 'S', 'N', 'A', 'P', 1};

typedef struct {
    char magic[8];
    uint32_t format;
    uint32_t keys;
    uint64_t version;
    uint64_t blob_bytes;
    uint8_t blobs_digest[DIGEST];
    uint8_t head_digest[DIGEST]; /* of this header (this field zeroed) and the table */
} file_header;

_Static_assert(sizeof(file_header) == 96, "the header is 96 bytes");

#define TABLE_BYTES (((size_t)BD_RANGE_SNAPSHOT_KEYS + 1) * sizeof(uint64_t))
#define DATA_AT (sizeof(file_header) + TABLE_BYTES)

static void head_digest(const file_header *h, const uint64_t *table, uint8_t out[DIGEST])
{
    file_header copy = *h;
    memset(copy.head_digest, 0, DIGEST);
    crypto_generichash_state st;
    crypto_generichash_init(&st, NULL, 0, DIGEST);
    crypto_generichash_update(&st, (const unsigned char *)&copy, sizeof copy);
    crypto_generichash_update(&st, (const unsigned char *)table, TABLE_BYTES);
    crypto_generichash_final(&st, out, DIGEST);
}

/* ---- writing ---------------------------------------------------------------------- */

struct bd_range_snapshot_writer {
    int fd;
    char *path, *tmp;
    uint64_t *table; /* BD_RANGE_SNAPSHOT_KEYS + 1 */
    uint32_t next;   /* keys below it have their offset */
    uint64_t at;     /* blob bytes so far */
    bd_buf pending;  /* blob bytes not yet written */
    crypto_generichash_state blobs;
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
    if (!w->path || !w->tmp || !w->table) {
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
    crypto_generichash_init(&w->blobs, NULL, 0, DIGEST);
    *out = w;
    return BD_OK;
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
    crypto_generichash_update(&w->blobs, blob, len);
    w->at += len;
    bd_result r = bd_buf_append(&w->pending, blob, len);
    if (r == BD_OK && w->pending.len >= WRITE_CHUNK)
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
                     .blob_bytes = w->at};
    memcpy(h.magic, MAGIC, sizeof MAGIC);
    crypto_generichash_final(&w->blobs, h.blobs_digest, DIGEST);
    head_digest(&h, w->table, h.head_digest);
    bd_result r = flush_pending(w);
    if (r == BD_OK && !(write_all(w->fd, &h, sizeof h, 0) &&
                        write_all(w->fd, w->table, TABLE_BYTES, (off_t)sizeof h) &&
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
    const uint8_t *blobs;
    atomic_long refs;
};

static bool well_formed(const uint8_t *map, size_t size, bool verify_blobs)
{
    if (size < DATA_AT)
        return false;
    const file_header *h = (const file_header *)map;
    if (memcmp(h->magic, MAGIC, sizeof MAGIC) != 0 || h->format != FORMAT ||
        h->keys != BD_RANGE_SNAPSHOT_KEYS || h->blob_bytes != size - DATA_AT)
        return false;
    const uint64_t *table = (const uint64_t *)(map + sizeof *h);
    uint8_t d[DIGEST];
    head_digest(h, table, d);
    if (sodium_memcmp(d, h->head_digest, DIGEST) != 0)
        return false;
    if (table[0] != 0 || table[BD_RANGE_SNAPSHOT_KEYS] != h->blob_bytes)
        return false;
    for (uint32_t k = 0; k < BD_RANGE_SNAPSHOT_KEYS; k++)
        if (table[k + 1] < table[k])
            return false;
    if (verify_blobs) {
        crypto_generichash(d, DIGEST, map + DATA_AT, h->blob_bytes, NULL, 0);
        if (sodium_memcmp(d, h->blobs_digest, DIGEST) != 0)
            return false;
    }
    return true;
}

bd_result bd_range_snapshot_open(const char *path, bool verify_blobs, bd_range_snapshot **out)
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
    if (!well_formed(map, (size_t)st.st_size, verify_blobs)) {
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
    s->blobs = s->map + DATA_AT;
    atomic_init(&s->refs, 1);
    *out = s;
    return BD_OK;
}

uint64_t bd_range_snapshot_version(const bd_range_snapshot *s)
{
    return s->h->version;
}

bd_result bd_range_snapshot_get(const bd_range_snapshot *s, bd_range_mode mode, uint32_t prefix,
                                bd_range_cb cb, void *ctx)
{
    if ((mode != BD_RANGE_SHA1 && mode != BD_RANGE_NTLM) || prefix > BD_RANGE_PREFIX_MAX)
        return BD_ERR_INVALID;
    uint32_t key = BD_RANGE_KEY(mode, prefix);
    uint64_t at = s->table[key], end = s->table[key + 1];
    if (end == at)
        return BD_OK;
    return bd_range_decode(key, s->blobs + at, (size_t)(end - at), cb, ctx);
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
