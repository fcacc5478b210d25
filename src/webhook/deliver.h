/* The delivery thread of breachd: polls the store's alerts outbox every 200 ms, leases the
 * due alerts (so that several servers of one store do not send one alert at once), POSTs
 * each to its watch's URL, signed, and settles it: delivered on a 2xx; otherwise retried
 * after 1 s, doubling up to 1 h between attempts, and given up 24 h after the alert was
 * written. At least once: an alert whose outcome was not recorded (a crash mid-send) is sent
 * again when its lease runs out; receivers deduplicate by X-Breachd-Event-Id.
 *
 * Ownership: bd_deliverer_start copies the store URI; the policy is borrowed and must
 * outlive the deliverer. */
#ifndef BD_WEBHOOK_DELIVER_H
#define BD_WEBHOOK_DELIVER_H

#include <stddef.h>
#include <stdint.h>

#include "core/result.h"
#include "webhook/policy.h"

#define BD_WEBHOOK_POLL_MS 200
#define BD_WEBHOOK_LEASE_MS 180000 /* a batch of 16 sends, at most 10 s each */
#define BD_WEBHOOK_FIRST_RETRY_MS 1000
#define BD_WEBHOOK_MAX_RETRY_MS 3600000 /* 1 h */
#define BD_WEBHOOK_GIVE_UP_MS 86400000  /* 24 h */

typedef struct bd_deliverer bd_deliverer;

/* Starts the thread. BD_ERR_NOMEM, or BD_ERR_IO when libcurl or the thread cannot start
 * (why says which). The store is opened by the thread and reopened after failures. */
bd_result bd_deliverer_start(const char *store_uri, const bd_webhook_policy *policy,
                             bd_deliverer **out, char *why, size_t whylen);
/* Stops the thread after the send in progress (at most its 10 s timeout) and frees it. */
void bd_deliverer_stop(bd_deliverer *d);

/* What this process's delivery did since it started (for /metrics). */
typedef struct {
    uint64_t delivered;       /* alerts a receiver took (2xx) */
    uint64_t failed_attempts; /* attempts that did not succeed (each retry counts) */
    uint64_t given_up;        /* alerts marked failed after 24 h */
} bd_webhook_counts;
void bd_webhook_counts_get(bd_webhook_counts *out);

/* The wait before attempt number attempts + 1, after `attempts` failed ones (>= 1). */
int64_t bd_webhook_retry_delay_ms(int64_t attempts);

#endif
