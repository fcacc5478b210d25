/* The waiting shared by the searches the lookup dispatcher answers (v7/pg_wait.h). */
#include <microhttpd.h>
#include <stdlib.h>

#include "http/pg_dispatch.h"
#include "v7/pg_wait.h"

bd_pg_route bd_pg_wait_route(struct bd_server *srv, const bd_req *rq, bool takes,
                             struct bd_pg_batch **b)
{
    *b = bd_server_pg_batch(srv);
    if (!rq->can_defer || !*b || !takes || !bd_pg_batch_open(*b))
        return BD_PG_HERE;
    return bd_pg_batch_enter(*b) ? BD_PG_ALONE : BD_PG_WAIT;
}

void *bd_pg_wait_new(struct bd_pg_batch *b, size_t size)
{
    void *d = calloc(1, size);
    if (!d)
        bd_pg_batch_leave(b);
    return d;
}

void bd_pg_wait_alone_end(struct bd_server *srv)
{
    bd_pg_batch_leave(bd_server_pg_batch(srv));
}

static void lookup_done(bd_pg_lookup *lk)
{
    bd_pg_wait *w = lk->ctx;
    MHD_resume_connection(w->base.conn);
}

static bool wait_start(bd_deferred *base)
{
    bd_pg_wait *w = (bd_pg_wait *)base;
    if (bd_pg_batch_submit(w->batch, &w->lk))
        return true;
    w->lk.result = BD_ERR_UNSUPPORTED; /* searched on the request's thread */
    return false;
}

void bd_pg_wait_init(bd_pg_wait *w, bd_req *rq, struct bd_pg_batch *b,
                     void (*finish)(bd_deferred *d, void *rq), void (*release)(bd_deferred *d))
{
    w->base = (bd_deferred){NULL, wait_start, finish, release};
    w->batch = b;
    w->lk.done = lookup_done;
    w->lk.ctx = w;
    rq->deferred = &w->base;
}

bd_pg_lookup *bd_pg_wait_lookup(bd_pg_wait *w)
{
    if (w->lk.result != BD_ERR_UNSUPPORTED)
        return &w->lk;
    bd_pg_batch_release(&w->lk);
    return NULL;
}

void bd_pg_wait_end(bd_pg_wait *w)
{
    bd_pg_batch_release(&w->lk);
    bd_pg_batch_leave(w->batch);
}
