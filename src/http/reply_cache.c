/* A worker's cached replies (reply_cache.h): one per resource variant is enough, since a
 * client asks for the catalog whole or for its newest few, and the variant is part of the
 * key. */
#include <stdlib.h>

#include "http/gzip.h"
#include "http/reply_cache.h"

#define CACHE_SLOTS 4
/* the largest reply kept: a catalog of ~20,000 breaches */
#define CACHE_MAX (16u * 1024 * 1024)

struct bd_reply_cache {
    struct {
        bool valid;
        int64_t version, variant;
        uint64_t used;
        bd_cached_reply reply;
    } slot[CACHE_SLOTS];
    uint64_t tick;
};

bd_reply_cache *bd_reply_cache_new(void)
{
    bd_reply_cache *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    for (int i = 0; i < CACHE_SLOTS; i++) {
        bd_buf_init(&c->slot[i].reply.body, CACHE_MAX);
        bd_buf_init(&c->slot[i].reply.gz, CACHE_MAX);
    }
    return c;
}

void bd_reply_cache_free(bd_reply_cache *c)
{
    if (!c)
        return;
    for (int i = 0; i < CACHE_SLOTS; i++) {
        bd_buf_free(&c->slot[i].reply.body);
        bd_buf_free(&c->slot[i].reply.gz);
    }
    free(c);
}

const bd_cached_reply *bd_reply_cache_get(const bd_reply_cache *c, int64_t version, int64_t variant)
{
    if (!c)
        return NULL;
    for (int i = 0; i < CACHE_SLOTS; i++)
        if (c->slot[i].valid && c->slot[i].version == version && c->slot[i].variant == variant)
            return &c->slot[i].reply;
    return NULL;
}

const bd_cached_reply *bd_reply_cache_put(bd_reply_cache *c, int64_t version, int64_t variant,
                                          bd_slice body, int64_t records, struct bd_gzip *g)
{
    if (!c || body.len > CACHE_MAX)
        return NULL;
    int k = 0; /* the slot of this variant, else an empty one, else the least recent */
    for (int i = 0; i < CACHE_SLOTS; i++) {
        if (c->slot[i].valid && c->slot[i].variant == variant) {
            k = i;
            break;
        }
        if (!c->slot[i].valid || c->slot[i].used < c->slot[k].used)
            k = i;
    }
    c->slot[k].valid = false;
    bd_cached_reply *r = &c->slot[k].reply;
    bd_buf_reset(&r->body);
    bd_buf_reset(&r->gz);
    if (bd_buf_append(&r->body, body.ptr, body.len) != BD_OK)
        return NULL;
    bd_etag_of(body, r->etag);
    r->records = records;
    if (g && body.len > BD_GZIP_MIN && bd_gzip_compress(g, body, &r->gz) != BD_OK)
        bd_buf_reset(&r->gz);
    c->slot[k].valid = true;
    c->slot[k].version = version;
    c->slot[k].variant = variant;
    c->slot[k].used = ++c->tick;
    return r;
}
