/* The SQLite backend as the store front sees it: what it offers (bd_sqlite_caps) and its
 * operations table, one member per store.h function, each implemented in the file of its
 * concern. Kept apart from conn.c so that no file both serves and names every other. */
#include "store/sqlite/sqlite_impl.h"

/* A file of one machine: its secret file beside it, an online copy (sqlite3_backup), a
 * write-ahead log file beside it that erasure must empty, and no counters shared across
 * machines (its single writer is the importer's). */
const bd_store_caps bd_sqlite_caps = {
    .database_server = false,
    .online_backup = true,
    .shared_rate_counters = false,
    .write_ahead_log_file = true,
    .log_file_suffix = "-wal",
};

const bd_store_ops bd_sqlite_ops = {
    .caps = &bd_sqlite_caps,
    .close = sq_close,
    .meta_get = sq_meta_get,
    .meta_set = sq_meta_set,
    .begin = sq_begin,
    .commit = sq_commit,
    .rollback = sq_rollback,
    .read_begin = sq_read_begin,
    .read_end = sq_read_end,
    .share_reads = sq_share_reads,
    .data_version = sq_data_version,
    .release_idle = sq_release_idle,
    .bulk_begin = sq_bulk_begin,
    .bulk_end = sq_bulk_end,
    .loaded = sq_loaded,
    .ping = sq_ping,
    .breach_put = sq_breach_put,
    .breach_list = sq_breach_list,
    .breach_by_id = sq_breach_by_id,
    .breach_get = sq_breach_get,
    .breach_exists = sq_breach_exists,
    .breach_refresh_count = sq_breach_refresh_count,
    .breach_records = sq_breach_records,
    .records_last_id = sq_records_last_id,
    .breach_by_name = sq_breach_by_name,
    .breaches_of_email = sq_breaches_of_email,
    .domain_breaches = sq_domain_breaches,
    .record_put = sq_record_put,
    .record_search = sq_record_search,
    .card_put = sq_card_put,
    .card_search = sq_card_search,
    .cvv_upgrade = sq_cvv_upgrade,
    .key_add = sq_key_add,
    .key_list = sq_key_list,
    .key_revoke = sq_key_revoke,
    .key_generation = sq_key_generation,
    .key_set_quota = sq_key_set_quota,
    .key_set_job_limits = sq_key_set_job_limits,
    .key_get = sq_key_get,
    .usage_add = sq_usage_add,
    .usage_give_back = sq_usage_give_back,
    .usage_get = sq_usage_get,
    .rate_take = sq_rate_take,
    .rate_give_back = sq_rate_give_back,
    .erase_email = sq_erase_email,
    .erase_breach = sq_erase_breach,
    .truncate_log = sq_truncate_log,
    .backup = sq_backup,
    .stats = sq_stats,
    .changes = sq_changes,
    .change_version = sq_change_version,
    .status_get = sq_status_get,
    .take_late_duplicates = sq_take_late_duplicates,
    .range_get = sq_range_get,
    .range_load = sq_range_load,
    .watch_add = sq_watch_add,
    .watch_list = sq_watch_list,
    .watch_remove = sq_watch_remove,
    .watch_generation = sq_watch_generation,
    .alert_add = sq_alert_add,
    .alert_list = sq_alert_list,
    .alert_lease = sq_alert_lease,
    .alert_settle = sq_alert_settle,
    .alert_prune = sq_alert_prune,
    .on_landed = sq_on_landed,
    .flush = sq_flush,
    .job_create = sq_job_create,
    .job_usage = sq_job_usage,
    .job_get = sq_job_get,
    .job_claim = sq_job_claim,
    .job_yield = sq_job_yield,
    .job_next_chunk = sq_job_next_chunk,
    .job_chunk_done = sq_job_chunk_done,
    .job_finish = sq_job_finish,
    .job_result = sq_job_result,
    .job_expire = sq_job_expire,
    .record_ids = sq_record_ids,
    .records_by_id = sq_records_by_id,
};

/* The backend's door: a connection whose calls go through the table above (conn.c opens
 * it, naming no table, so that the files the table names never depend on this one). */
bd_result bd_sqlite_open(const char *path, int flags, bd_store **out, char *why, size_t whylen)
{
    return sq_connect(path, flags, &bd_sqlite_ops, out, why, whylen);
}
