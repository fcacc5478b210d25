/* What a store backend provides behind store.h: a table of its operations. Every backend's
 * connection struct begins with a bd_store whose ops point at that table; store.c chooses
 * the backend by the URI scheme and forwards each call. Only src/store/ includes this. */
#ifndef BD_STORE_STORE_IMPL_H
#define BD_STORE_STORE_IMPL_H

#include "store/pastes.h"
#include "store/store.h"

/* Each member has the contract of the store.h function of the same name. */
typedef struct bd_store_ops {
    /* What the backend offers (bd_store_capabilities): the same table as its kind's. */
    const bd_store_caps *caps;
    void (*close)(bd_store *s);
    bd_result (*meta_get)(bd_store *s, const char *key, char *out, size_t outcap);
    bd_result (*meta_set)(bd_store *s, const char *key, const char *value);
    bd_result (*begin)(bd_store *s);
    bd_result (*commit)(bd_store *s);
    void (*rollback)(bd_store *s);
    bd_result (*read_begin)(bd_store *s);
    void (*read_end)(bd_store *s);
    void (*share_reads)(bd_store *s, int64_t window_us);
    uint64_t (*data_version)(bd_store *s);
    void (*release_idle)(bd_store *s);
    bd_result (*bulk_begin)(bd_store *s, bd_bulk_kind kind);
    bd_result (*bulk_end)(bd_store *s, bd_bulk_kind kind);
    void (*loaded)(bd_store *s, bd_bulk_kind kind, int64_t rows);
    bd_result (*ping)(bd_store *s);
    bd_result (*breach_put)(bd_store *s, const bd_breach_in *b, bool *inserted);
    bd_result (*breach_list)(bd_store *s, int limit, bd_breach_cb cb, void *ctx);
    bd_result (*breach_by_id)(bd_store *s, int64_t id, bd_breach_cb cb, void *ctx);
    bd_result (*breach_get)(bd_store *s, const char *uuid, bd_breach_cb cb, void *ctx);
    bd_result (*breach_exists)(bd_store *s, const char *uuid, bool *exists);
    /* counted >= 0: the count to set, else recounted from the records */
    bd_result (*breach_refresh_count)(bd_store *s, const char *uuid, int64_t counted);
    /* how many records a breach has, and the smallest record id among them (0: none) */
    bd_result (*breach_records)(bd_store *s, const char *uuid, int64_t *n, int64_t *min_id);
    /* optional, for count breaches at once where that costs less than breach_records for
     * each: n[i], how many records breach uuids[i] has when none has an id at or below
     * after (else -1); NULL: breach_records for each */
    bd_result (*breach_records_past)(bd_store *s, const char (*uuids)[BD_UUID_LEN + 1],
                                     size_t count, int64_t after, int64_t *n);
    bd_result (*records_last_id)(bd_store *s, int64_t *id);
    bd_result (*breach_by_name)(bd_store *s, bd_slice name, bd_breach_cb cb, void *ctx);
    bd_result (*breaches_of_email)(bd_store *s, bd_slice email, bd_breach_cb cb, void *ctx);
    bd_result (*domain_breaches)(bd_store *s, bd_slice domain, int64_t max_records,
                                 bd_domain_cb cb, void *ctx, int64_t *records);
    bd_result (*record_put)(bd_store *s, const bd_record_in *r, bool *inserted);
    void (*record_hint)(bd_store *s, const bd_record_in *r); /* NULL: nothing to fetch */
    bd_result (*record_search)(bd_store *s, bd_record_query *q, bd_record_cb cb, void *ctx,
                               int64_t *found);
    bd_result (*card_put)(bd_store *s, const bd_card_in *c, bool *inserted);
    bd_result (*card_search)(bd_store *s, const bd_card_query *q, int64_t *found, bd_card_cb cb,
                             void *ctx);
    bd_result (*cvv_upgrade)(bd_store *s, bd_cvv_protect_fn protect, void *ctx, int64_t *changed);
    bd_result (*key_add)(bd_store *s, const bd_key_row *k, int64_t *id);
    bd_result (*key_list)(bd_store *s, bd_key_cb cb, void *ctx);
    bd_result (*key_revoke)(bd_store *s, int64_t id, int64_t now);
    bd_result (*key_generation)(bd_store *s, int64_t *gen);
    bd_result (*key_set_quota)(bd_store *s, int64_t id, int64_t quota_per_month);
    bd_result (*key_set_job_limits)(bd_store *s, int64_t id, int64_t max_jobs,
                                    int64_t max_queued_identities, int64_t max_result_rows);
    bd_result (*key_get)(bd_store *s, int64_t id, bd_key_row *out);
    bd_result (*usage_add)(bd_store *s, int64_t key_id, int32_t day, int64_t count,
                           int64_t quota, int64_t *added, int64_t *month_total);
    bd_result (*usage_give_back)(bd_store *s, int64_t key_id, int32_t day, int64_t count);
    bd_result (*usage_get)(bd_store *s, int64_t key_id, int32_t day, int64_t *day_total,
                           int64_t *month_total);
    bd_result (*rate_take)(bd_store *s, int kind, int64_t id, int64_t now_us, int64_t share_us,
                           int64_t depth_us, int64_t want, int64_t *granted, int64_t *tat_us);
    bd_result (*rate_give_back)(bd_store *s, int kind, int64_t id, int64_t count,
                                int64_t share_us);
    bd_result (*erase_email)(bd_store *s, const char *email, bd_stats_cb cb, void *ctx,
                             int64_t *removed);
    bd_result (*erase_breach)(bd_store *s, const char *uuid, int64_t *records_removed);
    bd_result (*truncate_log)(bd_store *s, int64_t wait_ms);
    bd_result (*backup)(bd_store *s, const char *dest, int dest_fd);
    /* NULL: bd_store_distribute answers BD_ERR_INVALID */
    bd_result (*distribute)(bd_store *s, bool *clustered, bd_layout_cb cb, void *ctx);
    bd_result (*stats)(bd_store *s, bd_stats_cb cb, void *ctx, int64_t *total_records,
                       int64_t *total_cards);
    int64_t (*take_late_duplicates)(bd_store *s);
    bd_result (*changes)(bd_store *s, int64_t after, int limit, bd_change_cb cb, void *ctx);
    bd_result (*change_version)(bd_store *s, int64_t *version);
    bd_result (*status_get)(bd_store *s, bd_store_status *out);
    bd_result (*queue_depths)(bd_store *s, bd_store_queues *out);
    bd_result (*range_get)(bd_store *s, bd_range_mode mode, uint32_t prefix, bd_range_cb cb,
                           void *ctx);
    bd_result (*range_load)(bd_store *s, bd_range_mode mode, const uint8_t *hash,
                            uint32_t count);
    /* NULL: bd_store_range_export answers BD_ERR_INVALID */
    bd_result (*range_export)(bd_store *s, uint64_t *version, bd_range_bucket_cb cb,
                              void *ctx);
    bd_result (*watch_add)(bd_store *s, const bd_watch_row *w, int64_t max_per_key, int64_t *id);
    bd_result (*watch_list)(bd_store *s, int64_t key_id, int64_t live_at, bd_watch_cb cb,
                            void *ctx);
    bd_result (*watch_remove)(bd_store *s, int64_t key_id, int64_t id);
    bd_result (*watch_generation)(bd_store *s, int64_t *gen);
    bd_result (*alert_add)(bd_store *s, const bd_alert_in *a);
    bd_result (*alert_list)(bd_store *s, int64_t key_id, int64_t after, int limit,
                            bd_alert_cb cb, void *ctx);
    bd_result (*alert_lease)(bd_store *s, int64_t now_ms, int64_t lease_ms, int limit,
                             bd_alert_cb cb, void *ctx);
    bd_result (*alert_settle)(bd_store *s, int64_t seq, bd_alert_state state, int64_t attempts,
                              int64_t next_ms);
    bd_result (*alert_prune)(bd_store *s, int64_t before_s, int limit, int64_t *removed);
    void (*on_landed)(bd_store *s, bd_landed_cb cb, void *ctx);
    bd_result (*flush)(bd_store *s);
    bd_result (*job_create)(bd_store *s, const bd_job_row *j, const bd_slice *chunks,
                            size_t nchunks, const bd_job_limits *lim, bd_job_usage *usage);
    bd_result (*job_usage)(bd_store *s, int64_t key_id, bd_job_usage *out);
    bd_result (*job_get)(bd_store *s, const char *uuid, int64_t key_id, bd_job_row *out);
    bd_result (*job_claim)(bd_store *s, int64_t now, int64_t lease_s, bd_job_row *out);
    bd_result (*job_yield)(bd_store *s, const char *uuid, int64_t lease);
    bd_result (*job_next_chunk)(bd_store *s, const char *uuid, int64_t from, int64_t *chunk_no,
                                bd_buf *inputs);
    bd_result (*job_chunk_done)(bd_store *s, const char *uuid, int64_t lease,
                                const bd_job_chunk_out *c);
    bd_result (*job_finish)(bd_store *s, const char *uuid, int64_t lease, bd_job_status status,
                            int64_t now);
    bd_result (*job_result)(bd_store *s, const char *uuid, int64_t chunk_no, bd_buf *out);
    bd_result (*record_ids)(bd_store *s, bd_field field, const bd_slice *keys, size_t n,
                            int limit, bd_record_id_cb cb, void *ctx, int64_t scope_tenant);
    bd_result (*records_by_id)(bd_store *s, const int64_t *ids, size_t n, bd_record_cb cb,
                               void *ctx);
    bd_result (*job_expire)(bd_store *s, int64_t before, int64_t *removed);
    bd_result (*key_change)(bd_store *s, int64_t id, const bd_key_change *c);
    bd_result (*tenant_add)(bd_store *s, bd_slice name, int64_t now, int64_t *id);
    bd_result (*tenant_list)(bd_store *s, bd_tenant_cb cb, void *ctx);
    bd_result (*tenant_get)(bd_store *s, int64_t id, bd_tenant_row *out);
    bd_result (*tenant_rename)(bd_store *s, int64_t id, bd_slice name);
    bd_result (*tenant_remove)(bd_store *s, int64_t id);
    bd_result (*tenant_domain_add)(bd_store *s, int64_t id, bd_slice domain);
    bd_result (*tenant_domain_remove)(bd_store *s, int64_t id, bd_slice domain);
    bd_result (*tenant_domains)(bd_store *s, int64_t id, bd_tenant_domain_cb cb, void *ctx);
    bd_result (*audit_add)(bd_store *s, const bd_audit_row *r, int64_t *id);
    bd_result (*audit_list)(bd_store *s, int64_t before, int limit, bd_audit_cb cb, void *ctx);
    bd_result (*lookup_add)(bd_store *s, const bd_lookup_row *rows, size_t n);
    bd_result (*lookup_find)(bd_store *s, const uint8_t hash[32], int limit, bd_lookup_cb cb,
                             void *ctx);
    bd_result (*lookup_expire)(bd_store *s, int64_t before_at, int64_t *deleted);
    bd_result (*alert_triage)(bd_store *s, int64_t key_id, bd_slice event_id, int triage);
    bd_result (*session_end)(bd_store *s, bd_slice id, int64_t until_at, int64_t now);
    bd_result (*session_ended)(bd_store *s, bd_slice id, bool *ended);
    /* pastes (store/pastes.h) */
    bd_result (*paste_put)(bd_store *s, const bd_paste_row *p, const bd_slice *emails,
                           size_t n, bool *inserted);
    bd_result (*pastes_of_email)(bd_store *s, bd_slice email, bd_paste_cb cb, void *ctx);
    bd_result (*email_hashes_sync)(bd_store *s, int64_t *added);
    bd_result (*email_hashes_range)(bd_store *s, const char prefix[7], bd_email_hash_cb cb,
                                    void *ctx);
    bd_result (*email_hash_forget)(bd_store *s, bd_slice email);
    bd_result (*stealer_logs)(bd_store *s, bd_stealer_by by, bd_slice key, int64_t max,
                              bd_stealer_cb cb, void *ctx);
} bd_store_ops;

struct bd_store {
    const bd_store_ops *ops;
};

/* The landed row (bd_store_on_landed) of a record or card as it was put. */
/* A record's lookup key of each field (bd_field order; ptr NULL where it has none). */
void bd_record_keys(const bd_record_in *r, bd_slice key[BD_FIELD_COUNT]);
void bd_landed_of_record(const bd_record_in *r, int64_t breach_id, bd_landed_row *out);
void bd_landed_of_card(const bd_card_in *c, bd_landed_row *out);

/* The backends' capabilities (bd_store_kind_caps), each stated beside its operations. */
extern const bd_store_caps bd_sqlite_caps;
extern const bd_store_caps bd_pg_caps;

/* The backends' open functions, with bd_store_open's contract. */
bd_result bd_sqlite_open(const char *path, int flags, bd_store **out, char *why, size_t whylen);
bd_result bd_pg_open(const char *uri, int flags, bd_store **out, char *why, size_t whylen);

#endif
