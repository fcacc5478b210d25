/* The store contract of the queues' depths (store.h, bd_store_queue_depths) on every backend:
 * jobs queued or running counted until they end, alerts counted while pending (through
 * retries) and no longer once delivered or given up. Each test runs on a SQLite store and,
 * when BREACHD_TEST_PG_URI names a server, on a PostgreSQL store (store_fixture.h). */
#include "record_fixture.h"

static bd_store_queues depths(bd_store *s)
{
    bd_store_queues q = {-1, -1};
    CHECK_INT(bd_store_queue_depths(s, &q), BD_OK);
    return q;
}

static void add_job(bd_store *s, int n)
{
    bd_job_row j = {.key_id = 1, .type = BD_FIELD_EMAIL, .total = 1, .created_at = 1700000000};
    snprintf(j.uuid, sizeof j.uuid, "00000000-0000-4000-8000-%012d", n);
    bd_slice chunk = bd_slice_from("inputs");
    CHECK_INT(bd_store_job_create(s, &j, &chunk, 1, NULL, NULL), BD_OK);
}

TEST(test_jobs_waiting_until_they_end)
{
    bd_store *s = fresh();
    CHECK_INT(depths(s).jobs_waiting, 0);
    add_job(s, 1);
    add_job(s, 2);
    add_job(s, 3);
    CHECK_INT(depths(s).jobs_waiting, 3);
    bd_job_row a, b;
    CHECK_INT(bd_store_job_claim(s, 1700000001, 60, &a), BD_OK);
    CHECK_INT(depths(s).jobs_waiting, 3); /* running still waits for its end */
    CHECK_INT(bd_store_job_finish(s, a.uuid, a.lease, BD_JOB_DONE, 1700000002), BD_OK);
    CHECK_INT(depths(s).jobs_waiting, 2);
    CHECK_INT(bd_store_job_claim(s, 1700000003, 60, &b), BD_OK);
    CHECK_INT(bd_store_job_finish(s, b.uuid, b.lease, BD_JOB_FAILED, 1700000004), BD_OK);
    CHECK_INT(depths(s).jobs_waiting, 1);
    CHECK_INT(depths(s).alerts_pending, 0);
}

static int64_t seqs[4];
static int nseqs;

static int take_seq(void *ctx, const bd_alert_row *a)
{
    (void)ctx;
    if (nseqs < 4)
        seqs[nseqs++] = a->seq;
    return 0;
}

TEST(test_alerts_pending_until_delivered_or_given_up)
{
    bd_store *s = fresh();
    breaches(s);
    bd_watch_row w = {.key_id = 1,
                      .type = BD_FIELD_EMAIL,
                      .key = bd_slice_from("a@t.example"),
                      .shown = bd_slice_from("a@t.example"),
                      .url = bd_slice_from("http://h.example/"),
                      .secret = bd_slice_from("signing-secret-16b")};
    int64_t wid;
    CHECK_INT(bd_store_watch_add(s, &w, 0, &wid), BD_OK);
    bd_store *other = open_uri(fx_store[0].uri, BD_STORE_READ);
    CHECK_INT(bd_store_begin(s), BD_OK);
    for (int i = 0; i < 3; i++) {
        bd_alert_in a = {.watch_id = wid,
                         .key_id = 1,
                         .watch_type = BD_FIELD_EMAIL,
                         .watch_shown = bd_slice_from("a@t.example"),
                         .matched = 1,
                         .identities = bd_slice_from("[\"a@t.example\"]"),
                         .created_at = 1700000000};
        snprintf(a.event_id, sizeof a.event_id, "e-%d", i);
        CHECK_INT(bd_store_alert_add(s, &a), BD_OK);
    }
    CHECK_INT(depths(other).alerts_pending, 0); /* not before the transaction commits */
    CHECK_INT(bd_store_commit(s), BD_OK);
    CHECK_INT(depths(s).alerts_pending, 3);
    nseqs = 0;
    CHECK_INT(bd_store_alert_list(s, 1, 0, 10, take_seq, NULL), BD_OK);
    CHECK_INT(nseqs, 3);
    bd_store *d = open_uri(fx_store[0].uri, BD_STORE_WRITE | BD_STORE_SMALL_WRITES);
    CHECK_INT(bd_store_alert_settle(d, seqs[0], BD_ALERT_PENDING, 1, 5000), BD_OK); /* retry */
    CHECK_INT(depths(s).alerts_pending, 3);
    CHECK_INT(bd_store_alert_settle(d, seqs[1], BD_ALERT_DELIVERED, 1, 0), BD_OK);
    CHECK_INT(bd_store_alert_settle(d, seqs[2], BD_ALERT_FAILED, 9, 0), BD_OK);
    CHECK_INT(depths(s).alerts_pending, 1);
    CHECK_INT(depths(d).jobs_waiting, 0);
}

static void suite(void)
{
    RUN_CONTRACT(test_jobs_waiting_until_they_end);
    RUN_CONTRACT(test_alerts_pending_until_delivered_or_given_up);
}

int main(void)
{
    return fx_main(suite);
}
