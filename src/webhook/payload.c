/* Alert bodies and their signature (payload.h). */
#include "webhook/payload.h"

#include <sodium.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/sha256.h"
#include "ingest/watch_spec.h"

void bd_alert_write_json(bd_json *w, const bd_alert_row *a, bool with_delivery)
{
    char when[32];
    time_t t = (time_t)a->created_at;
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    bd_json_object_begin(w);
    BD_JSON_MEMBER_STRING(w, "event_id", a->event_id, false);
    BD_JSON_KEY(w, "event");
    bd_json_cstring(w, "watch.match");
    BD_JSON_KEY(w, "created_at");
    bd_json_cstring(w, when);
    BD_JSON_KEY(w, "watch");
    bd_json_object_begin(w);
    BD_JSON_KEY(w, "id");
    bd_json_int(w, a->watch_id);
    BD_JSON_KEY(w, "type");
    bd_json_cstring(w, bd_watch_type_name(a->watch_type));
    BD_JSON_MEMBER_STRING(w, "value", a->watch_shown, false);
    bd_json_object_end(w);
    BD_JSON_KEY(w, "breach");
    if (a->watch_type == BD_WATCH_BIN) {
        bd_json_null(w);
    } else {
        bd_json_object_begin(w);
        BD_JSON_MEMBER_STRING(w, "id", a->breach_uuid, false);
        BD_JSON_MEMBER_STRING(w, "name", a->breach_name, false);
        bd_json_object_end(w);
    }
    BD_JSON_KEY(w, "counts");
    bd_json_object_begin(w);
    if (a->watch_type == BD_WATCH_BIN)
        BD_JSON_KEY(w, "cards");
    else
        BD_JSON_KEY(w, "records");
    bd_json_int(w, a->matched);
    bd_json_object_end(w);
    BD_JSON_KEY(w, "identities");
    bd_json_raw(w, a->identities);
    if (with_delivery) {
        static const char *const STATES[] = {"pending", "delivered", "failed"};
        BD_JSON_KEY(w, "cursor");
        bd_json_int(w, a->cursor);
        BD_JSON_KEY(w, "delivery");
        bd_json_cstring(w, a->state <= BD_ALERT_FAILED ? STATES[a->state] : "failed");
        BD_JSON_KEY(w, "attempts");
        bd_json_int(w, a->attempts);
        BD_JSON_KEY(w, "triage");
        bd_json_cstring(w, bd_alert_triage_name(a->triage));
    }
    bd_json_object_end(w);
}

const char *bd_alert_triage_name(int triage)
{
    static const char *const NAMES[] = {"new", "acknowledged", "resolved", "false_positive"};
    return triage >= 0 && triage <= BD_TRIAGE_FALSE_POSITIVE ? NAMES[triage] : "new";
}

bool bd_alert_triage_parse(bd_slice s, int *triage)
{
    for (int t = 0; t <= BD_TRIAGE_FALSE_POSITIVE; t++) {
        const char *n = bd_alert_triage_name(t);
        if (s.len == strlen(n) && memcmp(s.ptr, n, s.len) == 0) {
            *triage = t;
            return true;
        }
    }
    return false;
}

void bd_webhook_sign(bd_slice secret, int64_t timestamp, bd_slice body, char out[68])
{
    bd_hmac_sha256_state st;
    uint8_t mac[BD_SHA256_LEN];
    char ts[24];
    int n = snprintf(ts, sizeof ts, "%lld.", (long long)timestamp);
    bd_hmac_sha256_init(&st, secret.ptr, secret.len);
    bd_hmac_sha256_update(&st, ts, (size_t)n);
    bd_hmac_sha256_update(&st, body.ptr, body.len);
    bd_hmac_sha256_final(&st, mac);
    sodium_memzero(&st, sizeof st);
    out[0] = 'v';
    out[1] = '1';
    out[2] = '=';
    sodium_bin2hex(out + 3, 65, mac, sizeof mac);
}
