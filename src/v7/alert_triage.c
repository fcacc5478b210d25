/* PATCH {base}/alerts/{event_id} {"state": new|acknowledged|resolved|false_positive}: an
 * analyst's verdict on one of the calling key's alerts (issue 34; the console's alerts page
 * sets it). Another key's alert, like an unknown one, is 404. */
#include <string.h>

#include "http/server_impl.h"
#include "ingest/jsonl.h"
#include "v7/handlers.h"
#include "webhook/payload.h"

#define EVENT_ID_MAX 128

void bd_handle_alert_triage(bd_server *srv, bd_req *rq, bd_slice event_id)
{
    (void)srv;
    if (!bd_params_check(rq, NULL, NULL))
        return;
    bd_slice body;
    if (!bd_req_body(rq, &body))
        return;
    bd_fields *f = bd_fields_new();
    if (!f) {
        bd_reply_error(rq, 500, "internal_error", "out of memory");
        return;
    }
    char why[256];
    bd_slice state = {NULL, 0};
    int triage = 0;
    if (bd_jsonl_parse(body.ptr, body.len, f, why, sizeof why) != BD_OK) {
        bd_reply_error(rq, 400, "invalid_json", "the body must be one JSON object with state");
    } else if (bd_fields_count(f) != 1 || !bd_fields_get(f, "state", &state)) {
        bd_reply_error(rq, 422, "validation_error", "the body takes state alone");
    } else if (!bd_alert_triage_parse(state, &triage)) {
        bd_reply_error(rq, 422, "validation_error",
                       "state must be new, acknowledged, resolved or false_positive");
    } else if (event_id.len == 0 || event_id.len > EVENT_ID_MAX) {
        bd_reply_error(rq, 404, "not_found", "no such alert");
    } else {
        bd_store *s = bd_req_writer(rq);
        bd_result r = s ? bd_store_alert_triage(s, rq->key.id, event_id, triage) : BD_OK;
        if (s && r == BD_ERR_NOT_FOUND) {
            bd_reply_error(rq, 404, "not_found", "no such alert");
        } else if (s && r != BD_OK) {
            bd_reply_store_error(rq, r);
        } else if (s) {
            bd_json *w = &rq->json;
            bd_reply_begin(rq, 200);
            bd_json_object_begin(w);
            BD_JSON_MEMBER_STRING(w, "event_id", event_id, false);
            BD_JSON_KEY(w, "triage");
            bd_json_cstring(w, bd_alert_triage_name(triage));
            bd_json_object_end(w);
            bd_reply_finish(rq);
        }
    }
    bd_fields_free(f);
}
