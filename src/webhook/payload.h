/* An alert as JSON: the webhook's body and an item of GET {base}/alerts are the same
 * object, so a pipeline that polls and a receiver that listens parse one shape. And the
 * signature over a body (HMAC-SHA-256 of "TIMESTAMP.BODY" under the watch's secret). */
#ifndef BD_WEBHOOK_PAYLOAD_H
#define BD_WEBHOOK_PAYLOAD_H

#include <stddef.h>
#include <stdint.h>

#include "core/json.h"
#include "store/store.h"

/* Writes the alert object: event_id, event ("watch.match"), created_at (RFC 3339 UTC),
 * watch {id, type, value}, breach {id, name} or null (card watches), counts {records} or
 * {cards}, identities; with_delivery (GET /alerts) adds cursor, delivery (pending,
 * delivered, failed) and attempts. */
void bd_alert_write_json(bd_json *w, const bd_alert_row *a, bool with_delivery);
/* An alert's triage (store.h bd_alert_triage) as the API names it: new, acknowledged,
 * resolved, false_positive; and back (false for any other text). */
const char *bd_alert_triage_name(int triage);
bool bd_alert_triage_parse(bd_slice s, int *triage);

/* "v1=" and 64 lower-case hex digits: HMAC-SHA-256 under secret of timestamp, '.', body.
 * out has 68 bytes. */
void bd_webhook_sign(bd_slice secret, int64_t timestamp, bd_slice body, char out[68]);

#endif
