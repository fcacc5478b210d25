/* A worker's cached replies (reply_cache.h): one per resource variant is enough, since a
 * client asks for the catalog whole or for its newest few, and the variant is part of the
 * key. */
#include <stdlib.h>
#include <string.h>

#include "http/gzip.h"
#include "http/reply_cache.h"

#define CACHE_SLOTS 4
/* the largest reply kept: a catalog of ~20,000 breaches */
#define CACHE_MAX (16u * 1024 * 1024)

struct bd_reply_cache {
    struct {
        int64_t version, variant;
        uint64_t used;
        bd_cached_reply *reply; /* NULL: empty */
    } slot[CACHE_SLOTS];
    uint64_t tick;
    bd_buf gz; /* where a body is compressed before it is kept */
};

void bd_cached_reply_ref(const bd_cached_reply *r)
{
    atomic_fetch_add(&((bd_cached_reply *)r)->refs, 1);
}

void bd_cached_reply_unref(const bd_cached_reply *r)
{
    if (r && atomic_fetch_sub(&((bd_cached_reply *)r)->refs, 1) == 1)
        free((void *)r);
}

bd_reply_cache *bd_reply_cache_new(void)
{
    bd_reply_cache *c = calloc(1, sizeof *c);
    if (c)
        bd_buf_init(&c->gz, CACHE_MAX);
    return c;
}

void bd_reply_cache_free(bd_reply_cache *c)
{
    if (!c)
        return;
    for (int i = 0; i < CACHE_SLOTS; i++)
        bd_cached_reply_unref(c->slot[i].reply);
    bd_buf_free(&c->gz);
    free(c);
}

const bd_cached_reply *bd_reply_cache_get(const bd_reply_cache *c, int64_t version, int64_t variant)
{
    if (!c)
        return NULL;
    for (int i = 0; i < CACHE_SLOTS; i++)
        if (c->slot[i].reply && c->slot[i].version == version && c->slot[i].variant == variant)
            return c->slot[i].reply;
    return NULL;
}

const bd_cached_reply *bd_reply_cache_put(bd_reply_cache *c, int64_t version, int64_t variant,
                                          bd_slice body, int64_t records, struct bd_gzip *g)
{
    if (!c || body.len > CACHE_MAX)
        return NULL;
    int k = 0; /* the slot of this variant, else an empty one, else the least recent */
    for (int i = 0; i < CACHE_SLOTS; i++) {
        if (c->slot[i].reply && c->slot[i].variant == variant) {
            k = i;
            break;
        }
        if (!c->slot[i].reply || c->slot[i].used < c->slot[k].used)
            k = i;
    }
    bd_buf_reset(&c->gz);
    if (!g || body.len <= BD_GZIP_MIN || bd_gzip_compress(g, body, &c->gz) != BD_OK)
        bd_buf_reset(&c->gz);
    bd_cached_reply *r = malloc(sizeof *r + body.len + c->gz.len);
    if (!r)
        return NULL;
    char *data = (char *)(r + 1);
    memcpy(data, body.ptr, body.len);
    if (c->gz.len)
        memcpy(data + body.len, c->gz.data, c->gz.len);
    atomic_init(&r->refs, 1);
    r->body = (bd_slice){data, body.len};
    r->gz = (bd_slice){data + body.len, c->gz.len};
    bd_etag_of(body, r->etag);
    r->records = records;
    bd_cached_reply_unref(c->slot[k].reply); /* a response may still hold it */
    c->slot[k].reply = r;
    c->slot[k].version = version;
    c->slot[k].variant = variant;
    c->slot[k].used = ++c->tick;
    return r;
}
