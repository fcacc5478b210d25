/* The delivery threads of breachd: one polls the store's alerts outbox every 200 ms and
 * leases due alerts (so that several servers of one store do not send one alert at once),
 * as many as it has idle senders; BD_WEBHOOK_SENDERS senders send them in their watches'
 * formats (signed JSON, Slack, Teams, Splunk HEC: a POST to the watch's URL; email: a mail
 * through breachd's SMTP server) at once, so a receiver that hangs holds back only the
 * sender waiting on it; the leasing thread settles each: delivered on a 2xx (a mail: the
 * server's 250); otherwise retried
 * after 1 s, doubling up to 1 h between attempts, and given up 24 h after the alert was
 * written. At least once: an alert whose outcome was not recorded (a crash mid-send) is sent
 * again when its lease runs out; receivers deduplicate by X-Breachd-Event-Id.
 *
 * The leasing thread also removes, once an hour, the alerts delivered or given up that are
 * older than the retention (their identities are kept no longer than they are useful), and
 * then empties the store's write-ahead log of their copies, as an erasure does.
 *
 * Ownership: the pool of write connections (store/pool.h) and the policy are borrowed
 * and must outlive the deliverer. */
#ifndef BD_WEBHOOK_DELIVER_H
#define BD_WEBHOOK_DELIVER_H

#include <stddef.h>
#include <stdint.h>

#include "core/result.h"
#include "webhook/policy.h"
#include "webhook/send.h"

#define BD_WEBHOOK_SENDERS 4
#define BD_WEBHOOK_POLL_MS 200
#define BD_WEBHOOK_LEASE_MS 60000 /* one send, at most 10 s, with room to record it */
#define BD_WEBHOOK_FIRST_RETRY_MS 1000
#define BD_WEBHOOK_MAX_RETRY_MS 3600000 /* 1 h */
#define BD_WEBHOOK_GIVE_UP_MS 86400000  /* 24 h */
#define BD_ALERT_PRUNE_EVERY_MS 3600000 /* 1 h, and once at start */

typedef struct bd_deliverer bd_deliverer;
struct bd_store_pool;

/* Starts the threads. retention_s: how long alerts delivered or given up are kept (0: for
 * ever). console_url (borrowed; NULL: none): the console's address, linked from Slack, Teams
 * and email alerts (store.h bd_watch_format; webhook/formats.h builds each body). smtp
 * (borrowed; NULL: none, email alerts fail and are retried): where email alerts go.
 * BD_ERR_NOMEM, or BD_ERR_IO when a thread cannot start (why says which). The leasing thread
 * takes its connection to the store from writes (opened with BD_STORE_WRITE |
 * BD_STORE_SMALL_WRITES) and drops it for a new one after failures. */
bd_result bd_deliverer_start(struct bd_store_pool *writes, const bd_webhook_policy *policy,
                             const char *console_url, const bd_smtp_config *smtp,
                             int64_t retention_s, bd_deliverer **out, char *why, size_t whylen);
/* Stops the threads after the sends in progress (at most their 10 s timeout), records
 * their outcomes, gives back what was leased and not sent, and frees them. */
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
