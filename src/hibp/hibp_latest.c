/* The Have I Been Pwned API v3's GET /latestbreach: the breach most recently added to the
 * corpus (the greatest AddedDate; among equal ones the first in the catalog's order,
 * BreachDate newest first), in HIBP's breach model. Its route is in routes.c. */
#include <string.h>

#include "hibp/hibp.h"
#include "http/server_impl.h"
#include "store/breach_name.h"

typedef struct {
    bool found;
    int64_t added_at;
    char name[BD_BREACH_NAME_MAX + 1];
    size_t name_len;
} latest;

static int pick_latest(void *ctx, const bd_breach_row *b)
{
    latest *l = ctx;
    if (l->found && b->added_at <= l->added_at)
        return 0;
    size_t n = b->name.len < BD_BREACH_NAME_MAX ? b->name.len : BD_BREACH_NAME_MAX;
    memcpy(l->name, b->name.ptr, n);
    l->name[n] = '\0';
    l->name_len = n;
    l->added_at = b->added_at;
    l->found = true;
    return 0;
}

static int write_latest(void *ctx, const bd_breach_row *b)
{
    bd_hibp_write_breach(ctx, b);
    return 0;
}

void bd_hibp_latest_breach(bd_server *srv, bd_req *rq, bd_slice arg)
{
    (void)srv;
    (void)arg;
    if (!bd_params_check(rq, NULL, NULL))
        return;
    latest l = {.found = false};
    bd_reply_begin(rq, 200);
    bd_result r = bd_store_read_begin(rq->store);
    if (r == BD_OK)
        r = bd_store_breach_list(rq->store, 0, pick_latest, &l);
    if (r == BD_OK && l.found) /* the same read: the breach picked is still there */
        r = bd_store_breach_by_name(rq->store, (bd_slice){l.name, l.name_len}, write_latest,
                                    &rq->json);
    bd_store_read_end(rq->store);
    if (r == BD_OK && !l.found)
        r = BD_ERR_NOT_FOUND;
    if (r == BD_ERR_NOT_FOUND) /* an empty corpus: HIBP's "not found" */
        bd_hibp_not_found(rq);
    else if (r != BD_OK)
        bd_reply_store_error(rq, r);
    else {
        rq->records = 1;
        bd_reply_finish(rq);
    }
}
