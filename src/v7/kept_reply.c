/* A reply kept per data version (v7/kept_reply.h). */
#include <stdlib.h>

#include "v7/kept_reply.h"
#include "http/reply_cache.h"
#include "http/server_impl.h"
#include "v7/handlers.h"
#include "v7/pg_wait.h"

/* The kept reply for the data version (read here when has_version is false, inside the read
 * view of the build so that a reply kept under a version is never older than it), or the
 * reply built and kept (a worker without a reply cache, out of memory, builds every one). */
static void answer(bd_req *rq, const bd_kept_reply_kind *k, int64_t variant, bool has_version,
                   int64_t version)
{
    const bd_cached_reply *kept = NULL;
    bd_result r = bd_store_read_begin(rq->store);
    if (r == BD_OK && !has_version)
        r = bd_store_change_version(rq->store, &version);
    if (r == BD_OK)
        kept = bd_reply_cache_get(rq->replies, version, variant);
    if (r == BD_OK && !kept)
        r = k->build(rq, variant);
    bd_store_read_end(rq->store);
    if (r != BD_OK) {
        bd_reply_store_error(rq, r);
        return;
    }
    if (!kept && rq->status == 200)
        kept = bd_reply_cache_put(
            rq->replies, version, variant, (bd_slice){rq->body->data, rq->body->len},
            k->counts_items ? rq->records : -1, k->gzip && rq->worker ? rq->worker->gzip : NULL);
    if (kept) {
        rq->status = 200;
        if (k->counts_items)
            rq->records = kept->records;
        rq->cached = kept;
    }
}

/* A request waiting for the dispatcher's read of the data version. */
typedef struct {
    bd_pg_wait w; /* first: the deferral */
    const bd_kept_reply_kind *k;
    int64_t variant;
} deferred_kept;

static void kept_finish(bd_deferred *base, void *rqp)
{
    deferred_kept *d = (deferred_kept *)base;
    bd_pg_lookup *lk = bd_pg_wait_lookup(&d->w); /* NULL: refused, read here */
    if (lk && lk->result != BD_OK) {
        bd_reply_store_error(rqp, lk->result);
        return;
    }
    answer(rqp, d->k, d->variant, lk != NULL, lk ? (int64_t)lk->version : 0);
}

static void kept_free(bd_deferred *base)
{
    deferred_kept *d = (deferred_kept *)base;
    bd_pg_wait_end(&d->w);
    free(d);
}

void bd_reply_kept(struct bd_server *srv, bd_req *rq, const bd_kept_reply_kind *k, int64_t variant)
{
    struct bd_pg_batch *b;
    bd_pg_route route = bd_pg_wait_route(srv, rq, true, &b);
    if (route == BD_PG_WAIT) {
        deferred_kept *d = bd_pg_wait_new(b, sizeof *d);
        if (d) {
            d->k = k;
            d->variant = variant;
            d->w.lk.kind = BD_PG_LOOKUP_VERSION;
            bd_pg_wait_init(&d->w, rq, b, kept_finish, kept_free);
            return; /* answered once the dispatcher has read the version */
        }
        route = BD_PG_HERE; /* bd_pg_wait_new left the dispatcher */
    }
    answer(rq, k, variant, false, 0);
    if (route == BD_PG_ALONE)
        bd_pg_wait_alone_end(srv);
}
