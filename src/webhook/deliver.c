/* The delivery thread (deliver.h). */
#include "webhook/deliver.h"

#include <pthread.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "store/pool.h"
#include "core/buf.h"
#include "core/json.h"
#include "core/log.h"
#include "store/store.h"
#include "webhook/formats.h"
#include "webhook/payload.h"
#include "webhook/send.h"

/* A slot holds one leased alert from its lease until its outcome is settled: the leasing
 * thread fills free slots, a sender sends a queued one, the leasing thread settles a done
 * one. A receiver that hangs holds one sender and its slot; the others go on. */
typedef enum { SLOT_FREE, SLOT_QUEUED, SLOT_SENDING, SLOT_DONE } slot_state;

/* One leased alert, copied out of the store's row: its body is built from it. */
typedef struct {
    slot_state state;
    bd_alert_row row;
    bd_buf text; /* the row's strings, which row's slices point into */
    bool copied; /* false: the copy failed; given back without a send */
    bool sent;   /* the outcome: delivered (2xx) */
    long status;
    const char *why;
} slot;

struct bd_deliverer {
    bd_store_pool *writes; /* the leasing thread's connection (store/pool.h) */
    const bd_webhook_policy *policy;
    const char *console_url; /* the link in Slack, Teams and email alerts; NULL: none */
    const bd_smtp_config *smtp; /* where email alerts go; NULL: none (they fail) */
    int64_t retention_s; /* alerts delivered or given up kept this long; 0: for ever */
    pthread_t leaser;
    pthread_t sender[BD_WEBHOOK_SENDERS];
    int senders;
    bool leaser_started;
    pthread_mutex_t mu;
    pthread_cond_t work; /* a slot was queued, or stop */
    pthread_cond_t done; /* a slot is done, or stop */
    bool stop;
    slot slots[BD_WEBHOOK_SENDERS];
};

static _Atomic uint64_t count_delivered, count_failed, count_given_up;

void bd_webhook_counts_get(bd_webhook_counts *out)
{
    out->delivered = count_delivered;
    out->failed_attempts = count_failed;
    out->given_up = count_given_up;
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t bd_webhook_retry_delay_ms(int64_t attempts)
{
    int64_t d = BD_WEBHOOK_FIRST_RETRY_MS;
    for (int64_t i = 1; i < attempts && d < BD_WEBHOOK_MAX_RETRY_MS; i++)
        d *= 2;
    return d < BD_WEBHOOK_MAX_RETRY_MS ? d : BD_WEBHOOK_MAX_RETRY_MS;
}

/* Copies slice v into the slot's text; its place is fixed up once all are in (the buffer
 * may move as it grows). */
static size_t keep(slot *it, bd_slice v, bool *ok)
{
    size_t at = it->text.len;
    if (v.ptr && bd_buf_append(&it->text, v.ptr, v.len) != BD_OK)
        *ok = false;
    return at;
}

/* The lease's callback, on the leasing thread: a free slot is its own (senders take only
 * queued ones) until it is queued under the lock. */
static int take_leased(void *ctx, const bd_alert_row *row)
{
    bd_deliverer *d = ctx;
    slot *it = NULL;
    pthread_mutex_lock(&d->mu);
    for (int i = 0; i < BD_WEBHOOK_SENDERS && !it; i++)
        if (d->slots[i].state == SLOT_FREE)
            it = &d->slots[i];
    pthread_mutex_unlock(&d->mu);
    if (!it)
        return 1;
    bd_buf_reset(&it->text);
    const bd_slice *src[] = {&row->event_id,    &row->watch_shown, &row->breach_uuid,
                             &row->breach_name, &row->identities,  &row->url,
                             &row->secret};
    size_t at[7];
    it->copied = true;
    for (int i = 0; i < 7; i++)
        at[i] = keep(it, *src[i], &it->copied);
    it->row = *row;
    bd_slice *dst[] = {&it->row.event_id,    &it->row.watch_shown, &it->row.breach_uuid,
                       &it->row.breach_name, &it->row.identities,  &it->row.url,
                       &it->row.secret};
    for (int i = 0; i < 7; i++)
        *dst[i] = it->copied && src[i]->ptr ? (bd_slice){it->text.data + at[i], src[i]->len}
                                            : (bd_slice){0};
    pthread_mutex_lock(&d->mu);
    it->state = SLOT_QUEUED;
    pthread_mutex_unlock(&d->mu);
    return 0;
}

/* Sends an alert in a format other than the signed JSON: its body, the event id (receivers
 * that can deduplicate by it), and for Splunk HEC the token. */
static bd_result send_mail(bd_webhook_sender *snd, const bd_deliverer *d, slot *it, bd_buf *body)
{
    const bd_alert_row *a = &it->row;
    bd_slice to;
    if (!d->smtp) {
        it->why = "breachd has no SMTP server for email alerts (breachd --smtp-url)";
        return BD_ERR_INVALID;
    }
    if (bd_watch_mailto_parse(a->url, &to, &it->why) != BD_OK)
        return BD_ERR_INVALID;
    bd_buf_reset(body);
    bd_result r = bd_alert_write_mail(body, a, d->smtp->from, to, d->console_url);
    if (r != BD_OK) {
        it->why = "the alert's mail could not be written";
        return r;
    }
    return bd_webhook_mail(snd, d->smtp, to, (bd_slice){body->data, body->len}, &it->status,
                           &it->why);
}

static bd_result send_formatted(bd_webhook_sender *snd, const bd_deliverer *d, slot *it,
                                bd_buf *body)
{
    const char *console_url = d->console_url;
    const bd_alert_row *a = &it->row;
    if (a->format == BD_WATCH_FORMAT_EMAIL)
        return send_mail(snd, d, it, body);
    bd_json w;
    bd_buf_reset(body);
    bd_json_init(&w, body);
    if (a->format == BD_WATCH_FORMAT_SLACK)
        bd_alert_write_slack(&w, a, console_url);
    else if (a->format == BD_WATCH_FORMAT_TEAMS)
        bd_alert_write_teams(&w, a, console_url);
    else
        bd_alert_write_hec(&w, a);
    bd_result r = bd_json_result(&w);
    if (r != BD_OK)
        return r;
    char h_event[96], h_auth[300];
    snprintf(h_event, sizeof h_event, "X-Breachd-Event-Id: %.*s", (int)a->event_id.len,
             a->event_id.ptr);
    const char *lines[2] = {h_event, h_auth};
    size_t n = 1;
    if (a->format == BD_WATCH_FORMAT_SPLUNK_HEC) {
        snprintf(h_auth, sizeof h_auth, "Authorization: Splunk %.*s", (int)a->secret.len,
                 a->secret.ptr ? a->secret.ptr : "");
        n = 2;
    }
    r = bd_webhook_post_headers(snd, a->url, lines, n, (bd_slice){body->data, body->len},
                                &it->status, &it->why);
    sodium_memzero(h_auth, sizeof h_auth);
    return r;
}

/* Sends one alert (a sender thread, no lock held). */
static void send_one(bd_webhook_sender *snd, const bd_deliverer *d, slot *it, bd_buf *body)
{
    const bd_alert_row *a = &it->row;
    it->status = 0;
    it->why = "the alert's body could not be written";
    if (a->format != BD_WATCH_FORMAT_JSON) {
        it->sent = send_formatted(snd, d, it, body) == BD_OK;
        return;
    }
    bd_json w;
    bd_buf_reset(body);
    bd_json_init(&w, body);
    bd_alert_write_json(&w, a, false);
    bd_result r = bd_json_result(&w);
    if (r == BD_OK) {
        int64_t ts = (int64_t)time(NULL);
        char sig[68];
        bd_webhook_sign(a->secret, ts, (bd_slice){body->data, body->len}, sig);
        r = bd_webhook_post(snd, a->url, a->event_id, ts, sig, (bd_slice){body->data, body->len},
                            &it->status, &it->why);
    }
    it->sent = r == BD_OK;
}

/* Records a done slot's outcome (the leasing thread). */
static void settle(bd_store *s, slot *it)
{
    const bd_alert_row *a = &it->row;
    int64_t attempts = a->attempts + 1;
    int64_t now = now_ms();
    if (it->sent) {
        bd_store_alert_settle(s, a->seq, BD_ALERT_DELIVERED, attempts, now);
        count_delivered++;
        bd_log(BD_LOG_INFO, "webhook", "webhook: alert %lld of watch %lld delivered (attempt %lld)",
               (long long)a->seq, (long long)a->watch_id, (long long)attempts);
        return;
    }
    int64_t next = now + bd_webhook_retry_delay_ms(attempts);
    bool give_up = next - a->created_at * 1000 > BD_WEBHOOK_GIVE_UP_MS;
    bd_store_alert_settle(s, a->seq, give_up ? BD_ALERT_FAILED : BD_ALERT_PENDING, attempts, next);
    count_failed++;
    if (give_up)
        count_given_up++;
    /* the URL may carry a token of the receiver's: it is not logged */
    bd_log(BD_LOG_WARN, "webhook",
           "webhook: alert %lld of watch %lld, attempt %lld failed (HTTP %ld: %s)%s",
           (long long)a->seq, (long long)a->watch_id, (long long)attempts, it->status,
           it->why ? it->why : "", give_up ? "; given up after 24 h" : "");
}

static void *sender(void *arg)
{
    bd_deliverer *d = arg;
    bd_webhook_sender *snd = bd_webhook_sender_new(d->policy);
    bd_buf body;
    bd_buf_init(&body, 1u << 20);
    if (!snd)
        bd_log(BD_LOG_ERROR, "webhook", "webhook: a sender could not start (libcurl)");
    pthread_mutex_lock(&d->mu);
    while (snd && !d->stop) {
        slot *it = NULL;
        for (int i = 0; i < BD_WEBHOOK_SENDERS && !it; i++)
            if (d->slots[i].state == SLOT_QUEUED)
                it = &d->slots[i];
        if (!it) {
            pthread_cond_wait(&d->work, &d->mu);
            continue;
        }
        it->state = SLOT_SENDING;
        pthread_mutex_unlock(&d->mu);
        if (it->copied)
            send_one(snd, d, it, &body);
        else
            it->sent = false, it->status = 0, it->why = "out of memory";
        pthread_mutex_lock(&d->mu);
        it->state = SLOT_DONE;
        pthread_cond_broadcast(&d->done);
    }
    pthread_mutex_unlock(&d->mu);
    bd_buf_free(&body);
    bd_webhook_sender_free(snd);
    return NULL;
}

/* Waits up to ms for a done slot or stop (d->mu held); returns whether to stop. */
static bool wait_ms(bd_deliverer *d, int64_t ms)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += ms / 1000;
    until.tv_nsec += (ms % 1000) * 1000000;
    if (until.tv_nsec >= 1000000000) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000;
    }
    bool any = false;
    while (!d->stop && !any) {
        for (int i = 0; i < BD_WEBHOOK_SENDERS && !any; i++)
            any = d->slots[i].state == SLOT_DONE;
        if (!any && pthread_cond_timedwait(&d->done, &d->mu, &until) != 0)
            break;
    }
    return d->stop;
}

static int count_state(const bd_deliverer *d, slot_state st)
{
    int n = 0;
    for (int i = 0; i < BD_WEBHOOK_SENDERS; i++)
        n += d->slots[i].state == st;
    return n;
}

#define PRUNE_BATCH 1000
#define PRUNE_ROUNDS 1000

/* Removes the alerts past the retention, PRUNE_BATCH at a time (a short write each: an
 * import waits for none of them long), at most PRUNE_ROUNDS batches a round; *removed says
 * how many. False when a batch failed (the store busy or gone): the round is tried again
 * after PRUNE_RETRY_MS rather than a whole BD_ALERT_PRUNE_EVERY_MS later. */
#define PRUNE_RETRY_MS 5000

static bool prune(bd_store *s, int64_t retention_s, int64_t *removed)
{
    int64_t before = now_ms() / 1000 - retention_s, total = 0, n = 0;
    bool done = true;
    for (int round = 0; round < PRUNE_ROUNDS; round++) {
        if (bd_store_alert_prune(s, before, PRUNE_BATCH, &n) != BD_OK) {
            done = false;
            break;
        }
        total += n;
        if (n < PRUNE_BATCH)
            break;
    }
    if (total > 0)
        bd_log(BD_LOG_INFO, "webhook",
               "removed %lld delivered or failed alerts older than %lld days", (long long)total,
               (long long)(retention_s / 86400));
    *removed = total;
    return done;
}

/* After a prune the removed identities are gone from the store's main file, but a
 * write-ahead log (SQLite's) still holds the pages that had them: emptied as after an
 * erasure (bd_store_truncate_log), which needs the readers of older snapshots to move on and
 * no import writing. Until it succeeds it is tried again every SCRUB_RETRY_MS. */
#define SCRUB_WAIT_MS 2000
#define SCRUB_RETRY_MS 30000

/* The leasing thread: the only one that uses the store. */
static void *leaser(void *arg)
{
    bd_deliverer *d = arg;
    bd_store *s = NULL;
    int64_t next_prune_ms = 0, next_scrub_ms = 0;
    bool scrub_due = false;
    pthread_mutex_lock(&d->mu);
    for (bool stop = false; !stop;) {
        /* what the senders finished: recorded, the slots freed */
        for (int i = 0; i < BD_WEBHOOK_SENDERS; i++) {
            if (d->slots[i].state != SLOT_DONE)
                continue;
            pthread_mutex_unlock(&d->mu);
            if (s)
                settle(s, &d->slots[i]);
            pthread_mutex_lock(&d->mu);
            d->slots[i].state = SLOT_FREE;
        }
        int free_slots = count_state(d, SLOT_FREE);
        int64_t pause = BD_WEBHOOK_POLL_MS;
        if (free_slots > 0) {
            pthread_mutex_unlock(&d->mu);
            char why[256];
            bool was_open = s != NULL;
            if (!s && bd_store_pool_get(d->writes, &s, why, sizeof why) != BD_OK)
                s = NULL;
            bd_result r = s ? bd_store_alert_lease(s, now_ms(), BD_WEBHOOK_LEASE_MS, free_slots,
                                                   take_leased, d)
                            : BD_ERR_STORE;
            if (r != BD_OK && s) {
                bd_store_pool_drop(d->writes); /* opened anew on the next round */
                s = NULL;
            }
            if (r == BD_OK && d->retention_s > 0 && now_ms() >= next_prune_ms) {
                int64_t removed;
                bool done = prune(s, d->retention_s, &removed);
                scrub_due |= removed > 0;
                next_prune_ms = now_ms() + (done ? BD_ALERT_PRUNE_EVERY_MS : PRUNE_RETRY_MS);
            }
            if (r == BD_OK && scrub_due && now_ms() >= next_scrub_ms) {
                scrub_due = bd_store_truncate_log(s, SCRUB_WAIT_MS) != BD_OK;
                next_scrub_ms = now_ms() + SCRUB_RETRY_MS;
            }
            pthread_mutex_lock(&d->mu);
            int leased = free_slots - count_state(d, SLOT_FREE);
            if (leased > 0)
                pthread_cond_broadcast(&d->work);
            /* all slots taken may leave more due behind them: look again once one is done */
            pause = r != BD_OK                ? (was_open ? 1000 : 5000)
                    : leased == free_slots ? 5000
                                           : BD_WEBHOOK_POLL_MS;
        }
        stop = wait_ms(d, count_state(d, SLOT_FREE) == 0 ? 5000 : pause);
    }
    /* stopping: wait for the sends in progress, record them; what was not sent is given
     * back, due at once */
    pthread_cond_broadcast(&d->work);
    while (count_state(d, SLOT_SENDING) > 0)
        pthread_cond_wait(&d->done, &d->mu);
    pthread_mutex_unlock(&d->mu);
    for (int i = 0; i < BD_WEBHOOK_SENDERS && s; i++) {
        slot *it = &d->slots[i];
        if (it->state == SLOT_DONE)
            settle(s, it);
        else if (it->state == SLOT_QUEUED)
            bd_store_alert_settle(s, it->row.seq, BD_ALERT_PENDING, it->row.attempts, now_ms());
        it->state = SLOT_FREE;
    }
    return NULL; /* s is the pool's */
}

bd_result bd_deliverer_start(bd_store_pool *writes, const bd_webhook_policy *policy,
                             const char *console_url, const bd_smtp_config *smtp,
                             int64_t retention_s, bd_deliverer **out, char *why, size_t whylen)
{
    *out = NULL;
    bd_deliverer *d = calloc(1, sizeof *d);
    if (!d) {
        snprintf(why, whylen, "out of memory");
        return BD_ERR_NOMEM;
    }
    d->writes = writes;
    d->policy = policy;
    d->console_url = console_url;
    d->smtp = smtp;
    d->retention_s = retention_s;
    pthread_mutex_init(&d->mu, NULL);
    pthread_cond_init(&d->work, NULL);
    pthread_cond_init(&d->done, NULL);
    for (int i = 0; i < BD_WEBHOOK_SENDERS; i++)
        bd_buf_init(&d->slots[i].text, 1u << 20);
    while (d->senders < BD_WEBHOOK_SENDERS &&
           pthread_create(&d->sender[d->senders], NULL, sender, d) == 0)
        d->senders++;
    d->leaser_started =
        d->senders == BD_WEBHOOK_SENDERS && pthread_create(&d->leaser, NULL, leaser, d) == 0;
    if (!d->leaser_started) {
        snprintf(why, whylen, "the webhook delivery threads could not start");
        bd_deliverer_stop(d);
        return BD_ERR_IO;
    }
    *out = d;
    return BD_OK;
}

void bd_deliverer_stop(bd_deliverer *d)
{
    if (!d)
        return;
    pthread_mutex_lock(&d->mu);
    d->stop = true;
    pthread_cond_broadcast(&d->work);
    pthread_cond_broadcast(&d->done);
    pthread_mutex_unlock(&d->mu);
    if (d->leaser_started)
        pthread_join(d->leaser, NULL);
    for (int i = 0; i < d->senders; i++)
        pthread_join(d->sender[i], NULL);
    for (int i = 0; i < BD_WEBHOOK_SENDERS; i++)
        bd_buf_free(&d->slots[i].text);
    pthread_mutex_destroy(&d->mu);
    pthread_cond_destroy(&d->work);
    pthread_cond_destroy(&d->done);
    free(d);
}
