/* GET /healthz, /metrics and /openapi.json (operations.h). */
#include "http/operations.h"

#include <microhttpd.h>
#include <time.h>

#include "core/version.h"
#include "jobs/runner.h"
#include "store/pg_batch.h"

#include "http/server_impl.h"

void bd_handle_health(bd_server *srv, bd_req *rq, bd_slice arg)
{
    (void)srv;
    (void)arg;
    bd_result r = bd_store_read_begin(rq->store);
    if (r == BD_OK)
        r = bd_store_ping(rq->store);
    bd_store_read_end(rq->store);
    if (r != BD_OK) {
        rq->retry_after = 1;
        bd_reply_error(rq, 503, "unavailable", "the store cannot be reached");
        return;
    }
    bd_reply_begin(rq, 200);
    bd_json_object_begin(&rq->json);
    bd_json_key(&rq->json, "status");
    bd_json_cstring(&rq->json, "ok");
    bd_json_object_end(&rq->json);
    bd_reply_finish(rq);
}

/* The build, the jobs this process ended, and from the store its queues, data version and
 * last import (left out when the store cannot be read: the scrape still answers). */
static bd_result write_operations(bd_req *rq)
{
    bd_job_counts jobs;
    bd_job_counts_get(&jobs);
    bd_result r = bd_buf_printf(
        rq->body,
        "# HELP breachd_build_info The version and commit of this breachd (always 1).\n"
        "# TYPE breachd_build_info gauge\n"
        "breachd_build_info{version=\"%s\",commit=\"%s\"} 1\n"
        "# HELP breachd_jobs_finished_total Bulk jobs this process ended, by outcome (failed: "
        "claimed too often without finishing).\n"
        "# TYPE breachd_jobs_finished_total counter\n"
        "breachd_jobs_finished_total{outcome=\"done\"} %llu\n"
        "breachd_jobs_finished_total{outcome=\"failed\"} %llu\n",
        bd_version(), bd_commit(), (unsigned long long)jobs.done, (unsigned long long)jobs.failed);
    bd_store_status st;
    if (r != BD_OK || bd_store_read_begin(rq->store) != BD_OK) {
        bd_store_read_end(rq->store);
        return r;
    }
    bd_store_queues qd;
    bd_result sr = bd_store_status_get(rq->store, &st);
    bd_result qr = bd_store_queue_depths(rq->store, &qd);
    bd_store_read_end(rq->store);
    if (qr == BD_OK)
        r = bd_buf_printf(rq->body,
                          "# HELP breachd_jobs_waiting Bulk jobs queued or running, in the "
                          "store (every instance's).\n"
                          "# TYPE breachd_jobs_waiting gauge\n"
                          "breachd_jobs_waiting %lld\n"
                          "# HELP breachd_alerts_pending Webhook alerts not yet delivered or "
                          "given up, in the store (due or waiting for a retry).\n"
                          "# TYPE breachd_alerts_pending gauge\n"
                          "breachd_alerts_pending %lld\n",
                          (long long)qd.jobs_waiting, (long long)qd.alerts_pending);
    if (sr != BD_OK || r != BD_OK)
        return r;
    r = bd_buf_printf(rq->body,
                      "# HELP breachd_data_version The store's data version (GET /v7/status).\n"
                      "# TYPE breachd_data_version gauge\n"
                      "breachd_data_version %lld\n",
                      (long long)st.version);
    /* the store's clock may round up past this one's: an age is never negative */
    int64_t age = (int64_t)time(NULL) - st.last_import_at;
    if (r == BD_OK && st.last_import_at > 0)
        r = bd_buf_printf(rq->body,
                          "# HELP breachd_last_import_timestamp_seconds When records or cards "
                          "were last added (Unix seconds).\n"
                          "# TYPE breachd_last_import_timestamp_seconds gauge\n"
                          "breachd_last_import_timestamp_seconds %lld\n"
                          "# HELP breachd_last_import_age_seconds Seconds since records or cards "
                          "were last added.\n"
                          "# TYPE breachd_last_import_age_seconds gauge\n"
                          "breachd_last_import_age_seconds %lld\n",
                          (long long)st.last_import_at, (long long)(age < 0 ? 0 : age));
    return r;
}

/* The PostgreSQL lookup dispatcher's figures, when it runs: lookups over statements is the
 * mean batch. */
static bd_result write_pg_batch(const bd_server *srv, bd_req *rq)
{
    if (!srv->pg_batch)
        return BD_OK;
    uint64_t lookups, batches, alone;
    bd_pg_batch_counts(srv->pg_batch, &lookups, &batches, &alone);
    return bd_buf_printf(rq->body,
                         "# HELP breachd_pg_batch_lookups_total Email searches and card BIN pages "
                         "answered by the PostgreSQL lookup dispatcher.\n"
                         "# TYPE breachd_pg_batch_lookups_total counter\n"
                         "breachd_pg_batch_lookups_total %llu\n"
                         "# HELP breachd_pg_batches_total Statements the lookup dispatcher "
                         "sent.\n"
                         "# TYPE breachd_pg_batches_total counter\n"
                         "breachd_pg_batches_total %llu\n"
                         "# HELP breachd_pg_batch_alone_total Searches the dispatcher "
                         "would have taken that found no other in progress and ran on their "
                         "own thread.\n"
                         "# TYPE breachd_pg_batch_alone_total counter\n"
                         "breachd_pg_batch_alone_total %llu\n",
                         (unsigned long long)lookups, (unsigned long long)batches,
                         (unsigned long long)alone);
}

void bd_handle_metrics(bd_server *srv, bd_req *rq, bd_slice arg)
{
    (void)arg;
    const union MHD_DaemonInfo *info =
        MHD_get_daemon_info(srv->daemon, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
    bd_reply_begin(rq, 200);
    rq->content_type = "text/plain; version=0.0.4; charset=utf-8";
    bd_limiter_health lh;
    bd_limiter_health_get(srv->limiter, &lh);
    if (bd_metrics_write(srv->metrics, rq->body, info ? (int64_t)info->num_connections : -1,
                         bd_guard_cut_count(srv->guard)) != BD_OK ||
        bd_metrics_write_limiter(&lh, rq->body) != BD_OK ||
        bd_metrics_write_webhooks(rq->body) != BD_OK ||
        bd_buf_printf(rq->body,
                      "# HELP breachd_upload_bytes_held Bytes of request bodies held now.\n"
                      "# TYPE breachd_upload_bytes_held gauge\n"
                      "breachd_upload_bytes_held %zu\n"
                      "# HELP breachd_upload_bytes_limit The most held at once "
                      "(--max-upload-memory).\n"
                      "# TYPE breachd_upload_bytes_limit gauge\n"
                      "breachd_upload_bytes_limit %zu\n",
                      bd_upload_budget_held(&srv->uploads), srv->uploads.total) != BD_OK) {
        rq->content_type = NULL;
        bd_reply_error(rq, 500, "internal_error", "metrics could not be written");
        return;
    }
    if (write_operations(rq) != BD_OK || write_pg_batch(srv, rq) != BD_OK) {
        rq->content_type = NULL;
        bd_reply_error(rq, 500, "internal_error", "metrics could not be written");
    }
}

void bd_handle_openapi(bd_server *srv, bd_req *rq, bd_slice arg)
{
    (void)arg;
    bd_reply_begin(rq, 200);
    if (bd_buf_append(rq->body, srv->openapi.data, srv->openapi.len) != BD_OK)
        bd_reply_error(rq, 500, "internal_error", "the document could not be sent");
}
