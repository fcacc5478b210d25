/* The packed bucket layout of password ranges and the accumulator that merges writes into
 * it (layout and reasons in ranges.h). */
#include "store/ranges.h"

#include <stdlib.h>
#include <string.h>

size_t bd_range_hash_len(bd_range_mode mode)
{
    return mode == BD_RANGE_NTLM ? BD_NTLM_LEN : BD_SHA1_LEN;
}

static size_t key_hash_len(uint32_t key)
{
    return bd_range_hash_len((bd_range_mode)(key >> 20));
}

/* Reads a varint count at *at; false when malformed or past 32 bits. */
static bool read_count(const uint8_t *p, size_t len, size_t *at, uint32_t *out)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 35 && *at < len; shift += 7) {
        uint8_t b = p[(*at)++];
        v |= (uint64_t)(b & 0x7F) << shift;
        if (!(b & 0x80)) {
            if (v > UINT32_MAX)
                return false;
            *out = (uint32_t)v;
            return true;
        }
    }
    return false;
}

static bd_result put_entry(bd_buf *out, const uint8_t *tail, size_t tlen, uint32_t count)
{
    uint8_t v[5];
    size_t n = 0;
    do {
        v[n] = (uint8_t)(count & 0x7F);
        count >>= 7;
        if (count)
            v[n] |= 0x80;
        n++;
    } while (count);
    bd_result r = bd_buf_append(out, tail, tlen);
    return r == BD_OK ? bd_buf_append(out, v, n) : r;
}

bd_result bd_range_decode(uint32_t key, const uint8_t *blob, size_t len, bd_range_cb cb, void *ctx)
{
    size_t hl = key_hash_len(key), tl = hl - 2;
    uint8_t hash[BD_SHA1_LEN] = {(uint8_t)(key >> 12), (uint8_t)(key >> 4)};
    for (size_t at = 0; at < len;) {
        uint32_t count;
        if (len - at < tl)
            return BD_ERR_STORE;
        memcpy(hash + 2, blob + at, tl);
        at += tl;
        if (!read_count(blob, len, &at, &count))
            return BD_ERR_STORE;
        if (cb(ctx, hash, count))
            break;
    }
    return BD_OK;
}

void bd_range_acc_init(bd_range_acc *a)
{
    memset(a, 0, sizeof *a);
    a->sorted = true;
}

void bd_range_acc_free(bd_range_acc *a)
{
    free(a->e);
    bd_range_acc_init(a);
}

void bd_range_acc_clear(bd_range_acc *a)
{
    a->n = 0;
    a->sorted = true;
}

static int entry_order(const void *x, const void *y)
{
    const bd_range_entry *a = x, *b = y;
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    return memcmp(a->hash, b->hash, sizeof a->hash);
}

bd_result bd_range_acc_add(bd_range_acc *a, bd_range_mode mode, const uint8_t *hash, uint32_t count,
                           bd_range_op op)
{
    if (a->n == a->cap) {
        size_t cap = a->cap ? a->cap * 2 : 4096;
        bd_range_entry *e = realloc(a->e, cap * sizeof *e);
        if (!e)
            return BD_ERR_NOMEM;
        a->e = e;
        a->cap = cap;
    }
    bd_range_entry *e = &a->e[a->n];
    memset(e->hash, 0, sizeof e->hash);
    memcpy(e->hash, hash, bd_range_hash_len(mode));
    e->key = BD_RANGE_KEY(mode, (uint32_t)hash[0] << 12 | (uint32_t)hash[1] << 4 | hash[2] >> 4);
    e->count = count;
    e->op = (uint8_t)op;
    if (a->n > 0 && a->sorted && entry_order(e - 1, e) > 0)
        a->sorted = false;
    a->n++;
    return BD_OK;
}

bd_result bd_range_acc_add_record(bd_range_acc *a, const bd_record_in *r)
{
    if (!r->has_ranges)
        return BD_OK;
    bd_result res = bd_range_acc_add(a, BD_RANGE_SHA1, r->password_sha1, 1, BD_RANGE_ADD);
    return res == BD_OK ? bd_range_acc_add(a, BD_RANGE_NTLM, r->password_ntlm, 1, BD_RANGE_ADD)
                        : res;
}

void bd_range_acc_sort(bd_range_acc *a)
{
    if (!a->sorted)
        qsort(a->e, a->n, sizeof *a->e, entry_order);
    a->sorted = true;
}

/* count folded with an entry's: added (saturating at 2^32-1) or the larger kept. */
static uint32_t fold(uint32_t count, const bd_range_entry *e)
{
    if (e->op == BD_RANGE_MAX)
        return e->count > count ? e->count : count;
    return count > UINT32_MAX - e->count ? UINT32_MAX : count + e->count;
}

bd_result bd_range_merge(uint32_t key, const uint8_t *old, size_t oldlen, const bd_range_entry *e,
                         size_t n, bd_buf *out)
{
    size_t tl = key_hash_len(key) - 2;
    size_t at = 0, i = 0;
    bd_result r = BD_OK;
    bd_buf_reset(out);
    while (r == BD_OK && (at < oldlen || i < n)) {
        const uint8_t *tail;
        uint32_t count = 0;
        int order;
        size_t old_at = at;
        if (at < oldlen) {
            if (oldlen - at < tl)
                return BD_ERR_STORE;
            at += tl;
            if (!read_count(old, oldlen, &at, &count))
                return BD_ERR_STORE;
            order = i < n ? memcmp(old + old_at, e[i].hash + 2, tl) : -1;
        } else {
            order = 1;
        }
        if (order > 0) { /* a new hash: the entries of it folded into 0 */
            at = old_at;
            count = 0;
        }
        tail = order > 0 ? e[i].hash + 2 : old + old_at;
        for (; order >= 0 && i < n && memcmp(e[i].hash + 2, tail, tl) == 0; i++)
            count = fold(count, &e[i]);
        if (count > 0)
            r = put_entry(out, tail, tl, count);
    }
    return r;
}

bd_result bd_range_acc_flush(bd_range_acc *a, const bd_range_io *io)
{
    bd_range_acc_sort(a);
    bd_buf merged;
    bd_buf_init(&merged, SIZE_MAX / 2);
    bd_result r = BD_OK;
    for (size_t i = 0; i < a->n && r == BD_OK;) {
        size_t j = i + 1;
        while (j < a->n && a->e[j].key == a->e[i].key)
            j++;
        const uint8_t *old;
        size_t oldlen;
        r = io->read(io->ctx, a->e[i].key, &old, &oldlen);
        if (r == BD_OK)
            r = bd_range_merge(a->e[i].key, old, oldlen, a->e + i, j - i, &merged);
        if (r == BD_OK)
            r = io->write(io->ctx, a->e[i].key, (const uint8_t *)merged.data, merged.len);
        i = j;
    }
    bd_buf_free(&merged);
    if (r == BD_OK)
        bd_range_acc_clear(a);
    return r;
}
