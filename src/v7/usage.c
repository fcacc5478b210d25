/* GET /usage under the v7 base path: the calling key's plan, hourly budget, requests today
 * and this month, monthly quota and expiry. The request itself takes from the hourly budget
 * (it is a request like any other to the server) but is not counted as usage, and is
 * answered when the quota is used up: a client can always learn when it resets. */
#include "v7/handlers.h"
#include "http/server_impl.h"

void bd_handle_usage(bd_server *srv, bd_req *rq, bd_slice arg)
{
    (void)arg;
    if (!bd_params_check(rq, NULL, NULL))
        return;
    const bd_key_info *k = &rq->key;
    int64_t today, month;
    bd_result r = bd_usage_get(srv->usage, k->id, rq->now_us, &today, &month);
    if (r != BD_OK) {
        bd_reply_store_error(rq, r);
        return;
    }
    bd_json *w = &rq->json;
    bd_reply_begin(rq, 200);
    bd_json_object_begin(w);
    bd_json_key(w, "plan");
    bd_json_cstring(w, k->plan[0] ? k->plan : "custom");
    bd_json_key(w, "hourly_limit");
    bd_json_int(w, rq->rate_limit);
    bd_json_key(w, "hourly_remaining");
    bd_json_int(w, rq->rate_remaining);
    bd_json_key(w, "requests_today");
    bd_json_int(w, today);
    bd_json_key(w, "requests_this_month");
    bd_json_int(w, month);
    bd_json_key(w, "monthly_quota");
    if (k->quota_per_month)
        bd_json_int(w, k->quota_per_month);
    else
        bd_json_null(w);
    bd_json_key(w, "monthly_remaining");
    if (k->quota_per_month)
        bd_json_int(w, month < k->quota_per_month ? k->quota_per_month - month : 0);
    else
        bd_json_null(w);
    bd_json_utc_member(w, "month_resets_at", bd_usage_month_end(rq->now_us / 1000000));
    bd_json_utc_member(w, "expires_at", k->expires_at);
    bd_json_object_end(w);
    bd_reply_finish(rq);
}
