/* The Have I Been Pwned API v3's GET /pasteaccount/{email}: the pastes an email address was
 * found in (imported with `breachctl import pastes`), in HIBP's paste model; 404 with an
 * empty body when none, as HIBP answers. A tenant key: its tenant's emails only, like
 * breachedaccount. Its route is in routes.c. */
#include <stdio.h>
#include <time.h>

#include "hibp/hibp.h"
#include "http/scope.h"
#include "http/server_impl.h"
#include "ingest/normalize.h"
#include "store/pastes.h"

static int write_paste(void *ctx, const bd_paste_row *p)
{
    bd_req *rq = ctx;
    bd_json *w = &rq->json;
    bd_json_object_begin(w);
    bd_json_key(w, "Source");
    bd_json_string(w, p->source);
    bd_json_key(w, "Id");
    bd_json_string(w, p->id);
    bd_json_key(w, "Title");
    if (p->title.ptr)
        bd_json_string(w, p->title);
    else
        bd_json_null(w);
    bd_json_key(w, "Date");
    if (p->date >= 0) {
        char out[32] = "1970-01-01T00:00:00Z";
        time_t t = (time_t)p->date;
        struct tm tm;
        if (gmtime_r(&t, &tm))
            strftime(out, sizeof out, "%Y-%m-%dT%H:%M:%SZ", &tm);
        bd_json_cstring(w, out);
    } else {
        bd_json_null(w);
    }
    bd_json_key(w, "EmailCount");
    bd_json_int(w, p->email_count);
    bd_json_object_end(w);
    rq->records++;
    return 0;
}

void bd_hibp_paste_account(bd_server *srv, bd_req *rq, bd_slice account)
{
    if (!bd_params_check(rq, NULL, NULL))
        return;
    char email[BD_NORM_MAX + 1];
    bd_slice key;
    if (!bd_hibp_email_account(srv, rq, account, email, &key))
        return;
    rq->records = 0;
    bd_reply_begin(rq, 200);
    bd_json_array_begin(&rq->json);
    bd_result r = bd_store_read_begin(rq->store);
    if (r == BD_OK)
        r = bd_store_pastes_of_email(rq->store, key, write_paste, rq);
    bd_store_read_end(rq->store);
    if (r != BD_OK) {
        bd_reply_store_error(rq, r);
        return;
    }
    if (rq->records == 0) {
        bd_hibp_not_found(rq);
        return;
    }
    bd_json_array_end(&rq->json);
    bd_reply_finish(rq);
}
