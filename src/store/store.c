/* The store interface's front: picks the backend by the URI's form and forwards each call
 * through the backend's operations table (store_impl.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/hex.h"
#include "core/pwhash.h"
#include "store/ranges.h"
#include "store/store_impl.h"
#include "store/uri.h"

/* A libpq connection URI or keyword/value string names a PostgreSQL store; anything else
 * is a SQLite file path. */
static bool is_postgres(const char *uri)
{
    return bd_uri_is_postgres(uri);
}

void bd_store_kind_caps(const char *uri, bd_store_caps *out)
{
    *out = is_postgres(uri) ? bd_pg_caps : bd_sqlite_caps;
}

void bd_store_capabilities(const bd_store *s, bd_store_caps *out)
{
    *out = *s->ops->caps;
}

bool bd_store_default_secret_path(const char *uri, char *out, size_t cap)
{
    bd_store_caps caps;
    bd_store_kind_caps(uri, &caps);
    if (caps.database_server)
        return false;
    return snprintf(out, cap, "%s.secret", uri) < (int)cap;
}

bd_result bd_store_open(const char *uri, int flags, bd_store **out, char *why, size_t whylen)
{
    if (is_postgres(uri))
        return bd_pg_open(uri, flags, out, why, whylen);
    return bd_sqlite_open(uri, flags, out, why, whylen);
}

void bd_store_close(bd_store *s)
{
    if (s)
        s->ops->close(s);
}

bd_result bd_store_meta_get(bd_store *s, const char *key, char *out, size_t outcap)
{
    return s->ops->meta_get(s, key, out, outcap);
}

bd_result bd_store_meta_set(bd_store *s, const char *key, const char *value)
{
    return s->ops->meta_set(s, key, value);
}

bd_result bd_store_begin(bd_store *s)
{
    return s->ops->begin(s);
}

bd_result bd_store_commit(bd_store *s)
{
    return s->ops->commit(s);
}

void bd_store_rollback(bd_store *s)
{
    s->ops->rollback(s);
}

bd_result bd_store_read_begin(bd_store *s)
{
    return s->ops->read_begin(s);
}

void bd_store_read_end(bd_store *s)
{
    s->ops->read_end(s);
}

void bd_store_share_reads(bd_store *s, int64_t window_us)
{
    s->ops->share_reads(s, window_us);
}

uint64_t bd_store_data_version(bd_store *s)
{
    return s->ops->data_version(s);
}

void bd_store_release_idle(bd_store *s)
{
    s->ops->release_idle(s);
}

bd_result bd_store_bulk_begin(bd_store *s, bd_bulk_kind kind)
{
    return kind == BD_BULK_RANGES ? BD_ERR_INVALID : s->ops->bulk_begin(s, kind);
}

bd_result bd_store_bulk_end(bd_store *s, bd_bulk_kind kind)
{
    return kind == BD_BULK_RANGES ? BD_ERR_INVALID : s->ops->bulk_end(s, kind);
}

void bd_store_loaded(bd_store *s, bd_bulk_kind kind, int64_t rows)
{
    s->ops->loaded(s, kind, rows);
}

bd_result bd_store_ping(bd_store *s)
{
    return s->ops->ping(s);
}

bd_result bd_store_breach_put(bd_store *s, const bd_breach_in *b, bool *inserted)
{
    return s->ops->breach_put(s, b, inserted);
}

bd_result bd_store_breach_list(bd_store *s, int limit, bd_breach_cb cb, void *ctx)
{
    return s->ops->breach_list(s, limit, cb, ctx);
}

bd_result bd_store_breach_by_id(bd_store *s, int64_t id, bd_breach_cb cb, void *ctx)
{
    return s->ops->breach_by_id(s, id, cb, ctx);
}

bd_result bd_store_breach_get(bd_store *s, const char *uuid, bd_breach_cb cb, void *ctx)
{
    return s->ops->breach_get(s, uuid, cb, ctx);
}

bd_result bd_store_breach_exists(bd_store *s, const char *uuid, bool *exists)
{
    return s->ops->breach_exists(s, uuid, exists);
}

bd_result bd_store_breach_refresh_count(bd_store *s, const char *uuid)
{
    return s->ops->breach_refresh_count(s, uuid, -1);
}

/* The import's own count when every record of the breach (n, the least id min_id) is one
 * it inserted; -1 (recount) otherwise. */
static int64_t settled_count(const bd_breach_tally *t, int64_t n, int64_t min_id)
{
    return n == t->inserted && (n == 0 || min_id > t->last_id_before) ? t->identities : -1;
}

bd_result bd_store_breach_settle_count(bd_store *s, const char *uuid, const bd_breach_tally *t)
{
    int64_t counted = -1;
    if (t && t->identities >= 0) {
        int64_t n = 0, min_id = 0;
        bd_result r = s->ops->breach_records(s, uuid, &n, &min_id);
        if (r != BD_OK)
            return r;
        counted = settled_count(t, n, min_id);
    }
    return s->ops->breach_refresh_count(s, uuid, counted);
}

bd_result bd_store_breach_settle_counts(bd_store *s, const char (*uuids)[BD_UUID_LEN + 1],
                                        const bd_breach_tally *t, size_t n)
{
    bool counted = false;   /* the import counted some breach's identities ... */
    bool one_import = true; /* ... and every tally is of one import (begun after one id) */
    for (size_t i = 0; i < n; i++) {
        counted = counted || t[i].identities >= 0;
        one_import = one_import && t[i].last_id_before == t[0].last_id_before;
    }
    if (!s->ops->breach_records_past || !counted || !one_import) {
        bd_result r = BD_OK;
        for (size_t i = 0; i < n && r == BD_OK; i++)
            r = bd_store_breach_settle_count(s, uuids[i], &t[i]);
        return r;
    }
    int64_t *records = calloc(n, sizeof *records);
    if (!records)
        return BD_ERR_NOMEM;
    bd_result r = s->ops->breach_records_past(s, uuids, n, t[0].last_id_before, records);
    for (size_t i = 0; i < n && r == BD_OK; i++) {
        bool own = t[i].identities >= 0 && records[i] == t[i].inserted; /* -1: older ones */
        r = s->ops->breach_refresh_count(s, uuids[i], own ? t[i].identities : -1);
    }
    free(records);
    return r;
}

bd_result bd_store_records_last_id(bd_store *s, int64_t *id)
{
    return s->ops->records_last_id(s, id);
}

bd_result bd_store_breach_by_name(bd_store *s, bd_slice name, bd_breach_cb cb, void *ctx)
{
    return s->ops->breach_by_name(s, name, cb, ctx);
}

bd_result bd_store_breaches_of_email(bd_store *s, bd_slice email, bd_breach_cb cb, void *ctx)
{
    return s->ops->breaches_of_email(s, email, cb, ctx);
}

bd_result bd_store_domain_breaches(bd_store *s, bd_slice domain, int64_t max_records,
                                   bd_domain_cb cb, void *ctx, int64_t *records)
{
    return s->ops->domain_breaches(s, domain, max_records, cb, ctx, records);
}

bd_result bd_store_record_put(bd_store *s, const bd_record_in *r, bool *inserted)
{
    return s->ops->record_put(s, r, inserted);
}

void bd_store_record_hint(bd_store *s, const bd_record_in *r)
{
    if (s->ops->record_hint)
        s->ops->record_hint(s, r);
}

bd_result bd_store_record_search(bd_store *s, bd_record_query *q, bd_record_cb cb, void *ctx,
                                 int64_t *found)
{
    return s->ops->record_search(s, q, cb, ctx, found);
}

bd_result bd_store_card_put(bd_store *s, const bd_card_in *c, bool *inserted)
{
    return s->ops->card_put(s, c, inserted);
}

bd_result bd_store_card_search(bd_store *s, const bd_card_query *q, int64_t *found,
                               bd_card_cb cb, void *ctx)
{
    return s->ops->card_search(s, q, found, cb, ctx);
}

bd_result bd_store_cvv_upgrade(bd_store *s, bd_cvv_protect_fn protect, void *ctx, int64_t *changed)
{
    *changed = 0;
    return s->ops->cvv_upgrade(s, protect, ctx, changed);
}

bd_result bd_store_erase_email(bd_store *s, const char *email, bd_stats_cb cb, void *ctx,
                               int64_t *removed)
{
    return s->ops->erase_email(s, email, cb, ctx, removed);
}

bd_result bd_store_erase_breach(bd_store *s, const char *uuid, int64_t *records_removed)
{
    return s->ops->erase_breach(s, uuid, records_removed);
}

bd_result bd_store_truncate_log(bd_store *s, int64_t wait_ms)
{
    return s->ops->truncate_log(s, wait_ms);
}

bd_result bd_store_backup(bd_store *s, const char *dest, int dest_fd)
{
    return s->ops->backup(s, dest, dest_fd);
}

bd_result bd_store_distribute(bd_store *s, bool *clustered, bd_layout_cb cb, void *ctx)
{
    *clustered = false;
    return s->ops->distribute ? s->ops->distribute(s, clustered, cb, ctx) : BD_ERR_INVALID;
}

bd_result bd_store_stats(bd_store *s, bd_stats_cb cb, void *ctx, int64_t *total_records,
                         int64_t *total_cards)
{
    return s->ops->stats(s, cb, ctx, total_records, total_cards);
}

int64_t bd_store_take_late_duplicates(bd_store *s)
{
    return s->ops->take_late_duplicates(s);
}

bd_result bd_store_range_get(bd_store *s, bd_range_mode mode, uint32_t prefix, bd_range_cb cb,
                             void *ctx)
{
    if ((mode != BD_RANGE_SHA1 && mode != BD_RANGE_NTLM) || prefix > BD_RANGE_PREFIX_MAX)
        return BD_ERR_INVALID;
    return s->ops->range_get(s, mode, prefix, cb, ctx);
}

bd_result bd_store_range_load(bd_store *s, bd_range_mode mode, const uint8_t *hash,
                              uint32_t count)
{
    if ((mode != BD_RANGE_SHA1 && mode != BD_RANGE_NTLM) || count == 0)
        return BD_ERR_INVALID;
    return s->ops->range_load(s, mode, hash, count);
}

bd_result bd_store_range_version(bd_store *s, uint64_t *version)
{
    char v[24];
    *version = 0;
    bd_result r = bd_store_meta_get(s, BD_RANGE_VERSION_KEY, v, sizeof v);
    if (r == BD_ERR_NOT_FOUND)
        return BD_OK;
    if (r == BD_OK)
        *version = strtoull(v, NULL, 10);
    return r;
}

bd_result bd_store_range_export(bd_store *s, uint64_t *version, bd_range_bucket_cb cb,
                                void *ctx)
{
    *version = 0;
    return s->ops->range_export ? s->ops->range_export(s, version, cb, ctx) : BD_ERR_INVALID;
}

bd_result bd_store_changes(bd_store *s, int64_t after, int limit, bd_change_cb cb, void *ctx)
{
    if (after < 0 || limit <= 0)
        return BD_ERR_INVALID;
    return s->ops->changes(s, after, limit, cb, ctx);
}

bd_result bd_store_change_version(bd_store *s, int64_t *version)
{
    return s->ops->change_version(s, version);
}

bd_result bd_store_status_get(bd_store *s, bd_store_status *out)
{
    return s->ops->status_get(s, out);
}

bd_result bd_store_queue_depths(bd_store *s, bd_store_queues *out)
{
    return s->ops->queue_depths(s, out);
}

bd_result bd_store_watch_add(bd_store *s, const bd_watch_row *w, int64_t max_per_key, int64_t *id)
{
    if (w->type < 0 || w->type >= BD_WATCH_TYPES || !w->key.ptr || !w->url.ptr || !w->secret.ptr)
        return BD_ERR_INVALID;
    return s->ops->watch_add(s, w, max_per_key, id);
}

bd_result bd_store_watch_list(bd_store *s, int64_t key_id, bd_watch_cb cb, void *ctx)
{
    return s->ops->watch_list(s, key_id, 0, cb, ctx);
}

bd_result bd_store_watch_list_live(bd_store *s, int64_t now_s, bd_watch_cb cb, void *ctx)
{
    return now_s > 0 ? s->ops->watch_list(s, 0, now_s, cb, ctx) : BD_ERR_INVALID;
}

bd_result bd_store_watch_remove(bd_store *s, int64_t key_id, int64_t id)
{
    return s->ops->watch_remove(s, key_id, id);
}

bd_result bd_store_watch_generation(bd_store *s, int64_t *gen)
{
    return s->ops->watch_generation(s, gen);
}

bd_result bd_store_alert_add(bd_store *s, const bd_alert_in *a)
{
    return s->ops->alert_add(s, a);
}

bd_result bd_store_alert_list(bd_store *s, int64_t key_id, int64_t after, int limit,
                              bd_alert_cb cb, void *ctx)
{
    return s->ops->alert_list(s, key_id, after, limit, cb, ctx);
}

bd_result bd_store_alert_triage(bd_store *s, int64_t key_id, bd_slice event_id, int triage)
{
    return s->ops->alert_triage(s, key_id, event_id, triage);
}

bd_result bd_store_session_end(bd_store *s, bd_slice id, int64_t until_at, int64_t now)
{
    return s->ops->session_end(s, id, until_at, now);
}

bd_result bd_store_session_ended(bd_store *s, bd_slice id, bool *ended)
{
    return s->ops->session_ended(s, id, ended);
}

bd_result bd_store_alert_lease(bd_store *s, int64_t now_ms, int64_t lease_ms, int limit,
                               bd_alert_cb cb, void *ctx)
{
    return s->ops->alert_lease(s, now_ms, lease_ms, limit, cb, ctx);
}

bd_result bd_store_alert_settle(bd_store *s, int64_t seq, bd_alert_state state, int64_t attempts,
                                int64_t next_ms)
{
    return s->ops->alert_settle(s, seq, state, attempts, next_ms);
}

bd_result bd_store_alert_prune(bd_store *s, int64_t before_s, int limit, int64_t *removed)
{
    *removed = 0;
    return limit > 0 ? s->ops->alert_prune(s, before_s, limit, removed) : BD_ERR_INVALID;
}

void bd_store_on_landed(bd_store *s, bd_landed_cb cb, void *ctx)
{
    s->ops->on_landed(s, cb, ctx);
}

bd_result bd_store_flush(bd_store *s)
{
    return s->ops->flush(s);
}

bd_result bd_store_job_create(bd_store *s, const bd_job_row *j, const bd_slice *chunks,
                              size_t nchunks, const bd_job_limits *lim, bd_job_usage *usage)
{
    if (j->total < 0 || j->type < 0 || j->type >= BD_FIELD_COUNT)
        return BD_ERR_INVALID;
    if (usage)
        *usage = (bd_job_usage){0, 0, 0, 0};
    return s->ops->job_create(s, j, chunks, nchunks, lim, usage);
}

bd_result bd_store_job_usage(bd_store *s, int64_t key_id, bd_job_usage *out)
{
    *out = (bd_job_usage){0, 0, 0, 0};
    return s->ops->job_usage(s, key_id, out);
}

bd_result bd_store_job_yield(bd_store *s, const char *uuid, int64_t lease)
{
    return s->ops->job_yield(s, uuid, lease);
}

bd_result bd_store_job_get(bd_store *s, const char *uuid, int64_t key_id, bd_job_row *out)
{
    return s->ops->job_get(s, uuid, key_id, out);
}

bd_result bd_store_job_claim(bd_store *s, int64_t now, int64_t lease_s, bd_job_row *out)
{
    return s->ops->job_claim(s, now, lease_s, out);
}

bd_result bd_store_job_next_chunk(bd_store *s, const char *uuid, int64_t from, int64_t *chunk_no,
                                  bd_buf *inputs)
{
    return s->ops->job_next_chunk(s, uuid, from, chunk_no, inputs);
}

bd_result bd_store_job_chunk_done(bd_store *s, const char *uuid, int64_t lease,
                                  const bd_job_chunk_out *c)
{
    if (c->n < 0 || c->rows < c->n || c->truncated < 0 || c->max_rows < 0)
        return BD_ERR_INVALID;
    return s->ops->job_chunk_done(s, uuid, lease, c);
}

bd_result bd_store_job_finish(bd_store *s, const char *uuid, int64_t lease, bd_job_status status,
                              int64_t now)
{
    if (status != BD_JOB_DONE && status != BD_JOB_FAILED)
        return BD_ERR_INVALID;
    return s->ops->job_finish(s, uuid, lease, status, now);
}

bd_result bd_store_job_result(bd_store *s, const char *uuid, int64_t chunk_no, bd_buf *out)
{
    return s->ops->job_result(s, uuid, chunk_no, out);
}

bd_result bd_store_record_ids(bd_store *s, bd_field field, const bd_slice *keys, size_t n,
                              int limit, bd_record_id_cb cb, void *ctx, int64_t scope_tenant)
{
    if (field < 0 || field >= BD_FIELD_COUNT || limit < 1 || scope_tenant < 0)
        return BD_ERR_INVALID;
    return n ? s->ops->record_ids(s, field, keys, n, limit, cb, ctx, scope_tenant) : BD_OK;
}

bd_result bd_store_records_by_id(bd_store *s, const int64_t *ids, size_t n, bd_record_cb cb,
                                 void *ctx)
{
    return n ? s->ops->records_by_id(s, ids, n, cb, ctx) : BD_OK;
}

bd_result bd_store_job_expire(bd_store *s, int64_t before, int64_t *removed)
{
    *removed = 0;
    return s->ops->job_expire(s, before, removed);
}

bd_result bd_store_paste_put(bd_store *s, const bd_paste_row *p, const bd_slice *emails, size_t n,
                             bool *inserted)
{
    return s->ops->paste_put(s, p, emails, n, inserted);
}

bd_result bd_store_pastes_of_email(bd_store *s, bd_slice email, bd_paste_cb cb, void *ctx)
{
    return s->ops->pastes_of_email(s, email, cb, ctx);
}

bd_result bd_store_email_hashes_sync(bd_store *s, int64_t *added)
{
    return s->ops->email_hashes_sync(s, added);
}

bd_result bd_store_email_hashes_range(bd_store *s, const char prefix[7], bd_email_hash_cb cb,
                                      void *ctx)
{
    return s->ops->email_hashes_range(s, prefix, cb, ctx);
}

bd_result bd_store_email_hash_forget(bd_store *s, bd_slice email)
{
    return s->ops->email_hash_forget(s, email);
}

void bd_email_sha1_hex(bd_slice email, char out[41])
{
    uint8_t h[BD_SHA1_LEN];
    bd_pw_sha1(email, h);
    bd_hex_encode(h, sizeof h, out);
    for (int i = 0; i < 40; i++)
        if (out[i] >= 'a' && out[i] <= 'f')
            out[i] = (char)(out[i] - 'a' + 'A');
    out[40] = '\0';
}

bd_result bd_store_email_hashes_note(bd_store *s)
{
    char v[8];
    bd_result r = bd_store_meta_get(s, "pending_email_hashes", v, sizeof v);
    if (r == BD_ERR_NOT_FOUND || (r == BD_OK && strcmp(v, "1") != 0))
        return BD_OK;
    int64_t added = 0;
    if (r == BD_OK)
        r = bd_store_email_hashes_sync(s, &added);
    return r == BD_OK ? bd_store_meta_set(s, "pending_email_hashes", "0") : r;
}

bd_result bd_store_stealer_logs(bd_store *s, bd_stealer_by by, bd_slice key, int64_t max,
                                bd_stealer_cb cb, void *ctx)
{
    return s->ops->stealer_logs(s, by, key, max, cb, ctx);
}
