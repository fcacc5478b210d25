/* The delivery thread (deliver.h). */
#include "webhook/deliver.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/buf.h"
#include "core/json.h"
#include "store/store.h"
#include "webhook/payload.h"
#include "webhook/send.h"

#define LEASE_BATCH 16

struct bd_deliverer {
    char *uri;
    const bd_webhook_policy *policy;
    pthread_t tid;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool stop;
};

/* One leased alert, copied out of the store's row: its body is built from it. */
typedef struct {
    bd_alert_row row;
    bd_buf text; /* the row's strings, which row's slices point into */
} leased;

typedef struct {
    leased items[LEASE_BATCH];
    int n;
} lease_batch;

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

/* Copies slice v into the item's text; its place is fixed up once all are in (the buffer
 * may move as it grows). */
static size_t keep(leased *it, bd_slice v, bool *ok)
{
    size_t at = it->text.len;
    if (v.ptr && bd_buf_append(&it->text, v.ptr, v.len) != BD_OK)
        *ok = false;
    return at;
}

static int take_leased(void *ctx, const bd_alert_row *row)
{
    lease_batch *b = ctx;
    if (b->n == LEASE_BATCH)
        return 1;
    leased *it = &b->items[b->n];
    bd_buf_reset(&it->text);
    bool ok = true;
    const bd_slice *src[] = {&row->event_id,    &row->watch_shown, &row->breach_uuid,
                             &row->breach_name, &row->identities,  &row->url,
                             &row->secret};
    size_t at[7];
    for (int i = 0; i < 7; i++)
        at[i] = keep(it, *src[i], &ok);
    if (!ok)
        return 0; /* its lease runs out and it is tried again */
    it->row = *row;
    bd_slice *dst[] = {&it->row.event_id,    &it->row.watch_shown, &it->row.breach_uuid,
                       &it->row.breach_name, &it->row.identities,  &it->row.url,
                       &it->row.secret};
    for (int i = 0; i < 7; i++)
        if (src[i]->ptr)
            *dst[i] = (bd_slice){it->text.data + at[i], src[i]->len};
    b->n++;
    return 0;
}

/* Sends one alert and records the outcome. */
static void deliver_one(bd_store *s, bd_webhook_sender *snd, leased *it, bd_buf *body)
{
    const bd_alert_row *a = &it->row;
    bd_json w;
    bd_buf_reset(body);
    bd_json_init(&w, body);
    bd_alert_write_json(&w, a, false);
    int64_t attempts = a->attempts + 1;
    long status = 0;
    const char *why = "the alert's body could not be written";
    bd_result r = bd_json_result(&w);
    if (r == BD_OK) {
        int64_t ts = (int64_t)time(NULL);
        char sig[68];
        bd_webhook_sign(a->secret, ts, (bd_slice){body->data, body->len}, sig);
        r = bd_webhook_post(snd, a->url, a->event_id, ts, sig, (bd_slice){body->data, body->len},
                            &status, &why);
    }
    int64_t now = now_ms();
    if (r == BD_OK) {
        bd_store_alert_settle(s, a->seq, BD_ALERT_DELIVERED, attempts, now);
        count_delivered++;
        fprintf(stderr, "breachd: webhook: alert %lld of watch %lld delivered (attempt %lld)\n",
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
    fprintf(stderr,
            "breachd: webhook: alert %lld of watch %lld, attempt %lld failed (HTTP %ld: %s)%s\n",
            (long long)a->seq, (long long)a->watch_id, (long long)attempts, status, why ? why : "",
            give_up ? "; given up after 24 h" : "");
}

static bool stopping(bd_deliverer *d)
{
    pthread_mutex_lock(&d->mu);
    bool stop = d->stop;
    pthread_mutex_unlock(&d->mu);
    return stop;
}

/* Waits up to ms, or until stop; returns whether to stop. */
static bool pause_ms(bd_deliverer *d, int64_t ms)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += ms / 1000;
    until.tv_nsec += (ms % 1000) * 1000000;
    if (until.tv_nsec >= 1000000000) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000;
    }
    pthread_mutex_lock(&d->mu);
    while (!d->stop && pthread_cond_timedwait(&d->cv, &d->mu, &until) == 0)
        ;
    bool stop = d->stop;
    pthread_mutex_unlock(&d->mu);
    return stop;
}

static void *run(void *arg)
{
    bd_deliverer *d = arg;
    bd_webhook_sender *snd = bd_webhook_sender_new(d->policy);
    lease_batch *b = calloc(1, sizeof *b);
    bd_buf body;
    bd_buf_init(&body, 1u << 20);
    for (int i = 0; b && i < LEASE_BATCH; i++)
        bd_buf_init(&b->items[i].text, 1u << 20);
    bd_store *s = NULL;
    bool stop = !snd || !b;
    if (stop)
        fprintf(stderr, "breachd: webhook: out of memory; no webhooks are delivered\n");
    while (!stop) {
        if (!s) {
            char why[256];
            if (bd_store_open(d->uri, BD_STORE_WRITE | BD_STORE_SMALL_WRITES, &s, why,
                              sizeof why) != BD_OK) {
                s = NULL;
                stop = pause_ms(d, 5000);
                continue;
            }
        }
        b->n = 0;
        bd_result r =
            bd_store_alert_lease(s, now_ms(), BD_WEBHOOK_LEASE_MS, LEASE_BATCH, take_leased, b);
        if (r != BD_OK) {
            bd_store_close(s); /* reopened on the next round */
            s = NULL;
            stop = pause_ms(d, 1000);
            continue;
        }
        int i = 0;
        for (; i < b->n && !stopping(d); i++)
            deliver_one(s, snd, &b->items[i], &body);
        for (; i < b->n; i++) /* stopping: what was not sent is given back, due at once */
            bd_store_alert_settle(s, b->items[i].row.seq, BD_ALERT_PENDING,
                                  b->items[i].row.attempts, now_ms());
        /* a full batch may have more behind it: no pause then */
        stop = pause_ms(d, b->n == LEASE_BATCH ? 0 : BD_WEBHOOK_POLL_MS);
    }
    bd_store_close(s);
    for (int i = 0; b && i < LEASE_BATCH; i++)
        bd_buf_free(&b->items[i].text);
    free(b);
    bd_buf_free(&body);
    bd_webhook_sender_free(snd);
    return NULL;
}

bd_result bd_deliverer_start(const char *store_uri, const bd_webhook_policy *policy,
                             bd_deliverer **out, char *why, size_t whylen)
{
    *out = NULL;
    bd_deliverer *d = calloc(1, sizeof *d);
    if (!d || !(d->uri = strdup(store_uri))) {
        free(d);
        snprintf(why, whylen, "out of memory");
        return BD_ERR_NOMEM;
    }
    d->policy = policy;
    pthread_mutex_init(&d->mu, NULL);
    pthread_cond_init(&d->cv, NULL);
    if (pthread_create(&d->tid, NULL, run, d) != 0) {
        snprintf(why, whylen, "the webhook delivery thread could not start");
        pthread_mutex_destroy(&d->mu);
        pthread_cond_destroy(&d->cv);
        free(d->uri);
        free(d);
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
    pthread_cond_broadcast(&d->cv);
    pthread_mutex_unlock(&d->mu);
    pthread_join(d->tid, NULL);
    pthread_mutex_destroy(&d->mu);
    pthread_cond_destroy(&d->cv);
    free(d->uri);
    free(d);
}
