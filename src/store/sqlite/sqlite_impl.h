/* The SQLite backend's insides, shared by the files of src/store/sqlite/ and by nothing else:
 * the connection struct and the fixed statements' ids (running statements is statements.h's,
 * which builds on this header and not the other way round). The backend's functions (sq_*)
 * have the contracts of the store.h functions of the same names; conn.c puts them in the
 * operations table that bd_sqlite_open hands out. */
#ifndef BD_STORE_SQLITE_SQLITE_IMPL_H
#define BD_STORE_SQLITE_SQLITE_IMPL_H

#include <pthread.h>
#include <sqlite3.h>

#include "core/buf.h"
#include "core/key128set.h"
#include "store/ranges.h"
#include "store/sqlite/cards_sql.h"
#include "store/store_impl.h"

/* Fixed statements, prepared on first use and kept for the connection's life; their SQL is
 * in statements.c. */
enum {
    Q_META_GET,
    Q_META_SET,
    Q_BEGIN,
    Q_BEGIN_READ,
    Q_COMMIT,
    Q_ROLLBACK,
    Q_PING,
    Q_OTHERS_VERSION,
    Q_BREACH_PUT,
    Q_BREACH_LIST,
    Q_BREACH_LIST_LIMIT,
    Q_BREACH_GET,
    Q_BREACH_BY_ID,
    Q_BREACH_ID,
    Q_BREACH_REFRESH,
    Q_BREACH_NAME_TAKEN,
    Q_BREACH_UNNAMED,
    Q_BREACH_SET_NAME,
    Q_BREACH_BY_NAME,
    Q_BREACHES_OF_EMAIL,
    Q_DOMAIN_BREACHES,
    Q_META_DELETE,
    Q_RECORD_PUT,
    Q_CARD_PUT,
    Q_CARD_WORDS_PUT,
    Q_CARD_OWNER_WORD_PUT,
    Q_CARD_OWNER_WORD_STAGE,
    Q_CARD_COUNT_ADD,
    Q_CARD_COUNT_SUM,
    Q_KEY_ADD,
    Q_KEY_LIST,
    Q_KEY_REVOKE,
    Q_KEY_BUMP,
    Q_KEY_SET_QUOTA,
    Q_KEY_SET_JOB_LIMITS,
    Q_KEY_GET,
    Q_USAGE_MONTH,
    Q_USAGE_DAY,
    Q_USAGE_GET,
    Q_USAGE_GIVE_BACK,
    Q_STATS,
    Q_ERASE_EMAIL_BREACHES,
    Q_ERASE_EMAIL,
    Q_ERASE_BREACH_RECORDS,
    Q_ERASE_BREACH_EMAIL_HASHES,
    Q_ERASE_BREACH,
    Q_COUNT_RECORDS,
    Q_DOMAIN_COUNT,
    Q_DOMAIN_COUNT_ADD,
    Q_ERASE_EMAIL_DOMAINS,
    Q_ERASE_BREACH_DOMAINS,
    Q_COUNT_CARDS,
    Q_MAX_CARD,
    Q_RANGE_GET,
    Q_RANGE_PUT,
    Q_MAX_RECORD,
    Q_CHANGE_ADD,
    Q_CHANGES_RECORDS,
    Q_CHANGES_CARDS,
    Q_CHANGE_CARDS_ADD,
    Q_CHANGE_BREACH,
    Q_CHANGES_ERASE_EMAIL,
    Q_CHANGES_LIST,
    Q_CHANGE_VERSION,
    Q_STATUS,
    Q_BREACH_COUNT,
    Q_BREACH_SET_COUNT,
    Q_BREACH_RECORDS,
    Q_RECORDS_LAST_ID,
    Q_JOB_PUT,
    Q_JOB_CHUNK_PUT,
    Q_JOB_GET,
    Q_JOB_CLAIM,
    Q_JOB_YIELD,
    Q_JOB_USAGE,
    Q_JOB_USAGE_OF,
    Q_JOB_NEXT_CHUNK,
    Q_JOB_CHUNK_RESULTS,
    Q_JOB_PROGRESS,
    Q_JOB_FINISH,
    Q_JOB_RESULT,
    Q_JOB_EXPIRE_CHUNKS,
    Q_JOB_EXPIRE,
    Q_KEY_CHANGE,
    Q_TENANT_ADD,
    Q_TENANT_LIST,
    Q_TENANT_GET,
    Q_TENANT_RENAME,
    Q_TENANT_KEYS,
    Q_TENANT_REMOVE,
    Q_TENANT_DOMAINS_DROP,
    Q_DOMAIN_CLASH,
    Q_DOMAIN_ADD,
    Q_DOMAIN_REMOVE,
    Q_DOMAINS_OF,
    Q_DOMAINS_ALL,
    Q_AUDIT_ADD,
    Q_AUDIT_LIST,
    Q_LOOKUP_ADD,
    Q_LOOKUP_FIND,
    Q_LOOKUP_EXPIRE,
    Q__COUNT
};

#define DYN_CACHE 32
#define BREACH_CACHE 1024 /* a power of two */
#define BREACH_PROBES 8   /* slots a breach may take from its hash on */

/* A breach an import looked up (records.c): "" uuid when empty. */
typedef struct {
    char uuid[BD_UUID_LEN + 1];
    int64_t id;
    int32_t date;
} breach_slot;

/* A card_counts key's increment in the open write transaction (card_counts.c): its bytes
 * at off in the tally's keys (len 0: an empty slot), at: where they are while flushing. */
typedef struct {
    uint64_t hash;
    const char *at;
    size_t off, len;
    int kind;
    int64_t n;
} sq_card_count;

typedef struct {
    sq_card_count *slot; /* open addressing, a power of two, at most half full */
    size_t cap, used;
    bd_buf keys;
} sq_card_tally;

/* A leak's count of cards the open write transaction added (card_leaks.c): its id's and
 * name's bytes at off in the tally's keys, one after the other; n 0: an empty slot. */
typedef struct {
    uint64_t hash;
    size_t off, id_len, name_len;
    bool id_null, name_null;
    int64_t n;
} sq_leak_count;

typedef struct {
    sq_leak_count *slot; /* open addressing, a power of two, at most half full */
    size_t cap, used;
    bd_buf keys;
    bool overflow; /* too many leaks to count here: the commit counts them in SQL */
} sq_leak_tally;

/* The connection: a bd_store (first, so that the front's bd_store * is this struct's address)
 * and what the backend keeps per connection. */
typedef struct sqlite_store {
    bd_store base;
    sqlite3 *db;
    sqlite3_stmt *fixed[Q__COUNT];
    struct {
        char *sql;
        sqlite3_stmt *stmt;
        uint64_t used;
    } dyn[DYN_CACHE];
    uint64_t tick;
    /* Shared read views (bd_store_share_reads): read_lock is held from read_begin to
     * read_end and by bd_store_release_idle; view_began is when the open view began
     * (monotonic ns), 0 when none is open. */
    int64_t share_ns;
    pthread_mutex_t read_lock;
    int64_t view_began;
    bd_buf sql; /* scratch for generated SQL */
    /* Breaches looked up by imports, by a hash of their uuid: a dump interleaves the
     * records of many breaches, and a lookup per row was 5% of a bulk import. Breaches
     * never change id or date, but one may be erased, or its insert rolled back: the cache
     * is emptied by an erasure, a rollback, and a commit of another connection (seen as a
     * change of others_version, PRAGMA data_version). */
    breach_slot breach_cache[BREACH_CACHE];
    int64_t others_version;
    /* card search: the SQL being built, its bound values and the strings made for them */
    cond_sql cond;
    bd_buf text;
    /* card_counts' increments of the open write transaction (card_counts.c) */
    sq_card_tally card_tally;
    /* the cards it added per leak, for the change log (card_leaks.c) */
    sq_leak_tally leak_tally;
    bool bulk_cards; /* in a bulk card load: words and counts are rebuilt at its end */
    /* a bulk card load into an empty table: its word index built beside (card_words_side.c) */
    struct sq_words_side *words_side;
    bool bulk_records; /* in a bulk record load: domain counts are recounted at its end */
    /* a bulk record load into an empty table without its dedup key (dedup_key.c): the
     * first 16 bytes of each record's key it put */
    bool dedup_deferred;
    bd_key128set load_keys;
    int64_t cache_before_defer;      /* PRAGMA cache_size before the key was deferred */
    const char *bulk_record_indexes; /* what a bulk record load drops and builds again */
    bool email_sha1_fn; /* breachd_email_sha1 is registered on the connection (pastes.c) */
    /* FTS5's own unicode61 tokenizer, made on first use: card_owner_words must hold exactly
     * the words the FTS5 index holds, and a query word must be split the same way. */
    fts5_tokenizer tokenizer;
    Fts5Tokenizer *words;
    /* password hashes of the open write transaction, merged into their buckets before it
     * commits (ranges.c) */
    bd_range_acc ranges;
    bd_buf range_blob; /* a bucket read for a merge, reused */
    /* the change log (changes.c): the largest record and card ids before the open write
     * transaction's first put of each, -1 before it; what it added has greater ids */
    int64_t tx_records_from, tx_cards_from;
    /* bd_store_on_landed: told of every record or card that goes in */
    bd_landed_cb landed;
    void *landed_ctx;
    struct sq_outbox *outbox; /* delivery's state (alerts.c), made on the first lease */
} sqlite_store;

/* The connection behind a bd_store that bd_sqlite_open handed out. */
static inline sqlite_store *S(bd_store *s)
{
    return (sqlite_store *)s;
}

/* CLOCK_MONOTONIC in nanoseconds (conn.c). */
int64_t sq_monotonic_ns(void);

/* ---- a bulk card load's word index, built on another thread (card_words_side.c) ------- */

/* FTS5's term hash for building the word index of a whole load (a few large segments: conn.c,
 * CARD_WORDS_REBUILD), and FTS5's default, kept for the small writes of plain imports. */
#define SQ_CARD_WORDS_BULK_HASH                                                            \
    "INSERT INTO cards_words(cards_words, rank) VALUES ('hashsize', 16777216);"
#define SQ_CARD_WORDS_SMALL_HASH                                                           \
    "INSERT INTO cards_words(cards_words, rank) VALUES ('hashsize', 1048576);"

/* Between transactions, before a bulk load into an empty cards table: makes the side file
 * and its spool and attaches the file. BD_OK, or an error after which the load rebuilds the
 * index itself as before (nothing to undo). */
bd_result sq_words_side_begin(sqlite_store *s);
/* Notes a card the load put (the card's rowid, owner and bank; a NULL ptr is NULL). */
void sq_words_side_note(sqlite_store *s, int64_t rowid, bd_slice owner, bd_slice bank);
/* At the load's end, once every card is put: the side index is built on a thread of its
 * own meanwhile. */
void sq_words_side_start(sqlite_store *s);
/* Waits for the side index and copies it into cards_words; *landed false (and BD_OK) when
 * there is none to copy, and the load must rebuild cards_words itself. */
bd_result sq_words_side_land(sqlite_store *s, bool *landed);
/* After the load's transaction ended (or the connection's close): waits for the thread,
 * detaches and removes the side file. */
void sq_words_side_end(sqlite_store *s);

/* BEGIN with the write lock of the store's own file alone (txn.c). */
bd_result sq_begin_main_only(bd_store *base);

/* ---- the change log (changes.c) ------------------------------------------------------- */

/* Notes, before a record (cards: a card) is put in a write transaction, where its ids
 * begin; the first put of each kind in the transaction asks the table. */
bd_result sq_changes_note_put(sqlite_store *s, bool cards);
/* Writes the log rows of what the open transaction added; called just before COMMIT. */
bd_result sq_changes_flush(sqlite_store *s);
/* card_counts moved by the open write transaction (card_counts.c): add adds one to the
 * count of kind's key a (alen bytes), or of "a b" when b is not NULL; flush writes what was
 * added (at each commit, and before card_counts is read on the connection); forget drops
 * it (a rollback, a bulk load's recount); free at close. */
bd_result sq_card_count_add(sqlite_store *s, int kind, const char *a, size_t alen, const char *b,
                            size_t blen);
bd_result sq_card_counts_flush(sqlite_store *s);
/* The page cache set small around a statement that sorts many rows (conn.c): SQLite's
 * sorter keeps runs of the cache's size in memory, so with a bulk writer's 1 GiB cache a
 * large sort held up to that much beside the cache itself. begin returns the setting to
 * give back to end. */
int64_t sq_sort_memory_begin(sqlite_store *s);
/* The one whole number a query gives, or -1 (a statement prepared for the call). */
int64_t sq_int_of(sqlite_store *s, const char *sql);
/* Sets PRAGMA cache_size (pages, or KiB when negative) and returns what it was. */
int64_t sq_cache_set(sqlite_store *s, int64_t size);
bd_result sq_sort_memory_end(sqlite_store *s, int64_t was);
/* The records' dedup key as an index of its own (dedup_key.c). note finishes its
 * migration; defer drops it for a bulk load into an empty table (nothing when the table has
 * rows or the key is its column constraint); seen tells whether the deferred load already
 * put a record of that key, building the key live when the load's set is full; end builds
 * it by sorting once; forget drops the load's set (a rollback). */
/* Whether the records are keyed by records_key (breach_id, dedup), an index of its own. */
bool sq_records_keyed(sqlite_store *s);
bd_result sq_dedup_key_note(sqlite_store *s);
bd_result sq_dedup_defer(sqlite_store *s);
bd_result sq_dedup_seen(sqlite_store *s, const uint8_t dedup[16], bool *seen);
/* bd_store_record_hint: the load's key set slot of r's key, fetched ahead of its put. */
void sq_record_hint(bd_store *base, const bd_record_in *r);
bd_result sq_dedup_end(sqlite_store *s);
void sq_dedup_forget(sqlite_store *s);
/* How many records a deferred load keeps in memory (tests make it small). */
extern size_t sq_load_keys_max;
/* Finishes migration 21 (cards.c): card_owner_words by card id. */
bd_result sq_owner_words_note(sqlite_store *s);
void sq_card_counts_forget(sqlite_store *s);
void sq_leak_tally_add(sqlite_store *s, bd_slice id, bd_slice name);
/* Whether the tally holds every leak the transaction's cards named (not past its cap). */
bool sq_leak_tally_usable(const sqlite_store *s);
/* Writes the change log's "cards added" rows from the tally, in the GROUP BY's order. */
bd_result sq_leak_tally_flush(sqlite_store *s, int64_t now);
void sq_leak_tally_forget(sqlite_store *s);
void sq_leak_tally_free(sqlite_store *s);
void sq_card_counts_free(sqlite_store *s);
/* Forgets the transaction's puts (after a commit or a rollback). */
void sq_changes_forget(sqlite_store *s);
/* One row about a breach: added (count 1), changed (count: its pwned_count now, read from
 * the table) or removed (count given). */
bd_result sq_change_breach(sqlite_store *s, bd_change_kind kind, const char *uuid, int64_t n);
/* records_removed rows for the breaches holding records of email, before they are erased. */
bd_result sq_changes_erase_email(sqlite_store *s, const char *email);

/* ---- the backend's operations, by file ---------------------------------------------- */

/* conn.c */
void sq_close(bd_store *base);
bd_result sq_meta_get(bd_store *base, const char *key, char *out, size_t outcap);
bd_result sq_meta_set(bd_store *base, const char *key, const char *value);
bd_result sq_begin(bd_store *base);
bd_result sq_commit(bd_store *base);
void sq_rollback(bd_store *base);
bd_result sq_read_begin(bd_store *base);
void sq_read_end(bd_store *base);
void sq_share_reads(bd_store *base, int64_t window_us);
uint64_t sq_data_version(bd_store *base);
void sq_release_idle(bd_store *base);
bd_result sq_bulk_begin(bd_store *base, bd_bulk_kind kind);
bd_result sq_bulk_end(bd_store *base, bd_bulk_kind kind);
bd_result sq_ping(bd_store *base);

/* breaches.c */
bd_result sq_breach_put(bd_store *base, const bd_breach_in *b, bool *inserted);
bd_result sq_breach_list(bd_store *base, int limit, bd_breach_cb cb, void *ctx);
bd_result sq_breach_by_id(bd_store *base, int64_t id, bd_breach_cb cb, void *ctx);
bd_result sq_breach_get(bd_store *base, const char *uuid, bd_breach_cb cb, void *ctx);
bd_result sq_breach_exists(bd_store *base, const char *uuid, bool *exists);
bd_result sq_breach_refresh_count(bd_store *base, const char *uuid, int64_t counted);
bd_result sq_breach_records(bd_store *base, const char *uuid, int64_t *n, int64_t *min_id);
bd_result sq_records_last_id(bd_store *base, int64_t *id);
/* A breach's row id and date by uuid; BD_ERR_NOT_FOUND when absent. */
bd_result sq_breach_id(sqlite_store *s, const char *uuid, int64_t *id, int32_t *date);
bd_result sq_breach_by_name(bd_store *base, bd_slice name, bd_breach_cb cb, void *ctx);
bd_result sq_breaches_of_email(bd_store *base, bd_slice email, bd_breach_cb cb, void *ctx);
/* pastes.c (store/pastes.h) */
bd_result sq_paste_put(bd_store *base, const bd_paste_row *p, const bd_slice *emails, size_t n,
                       bool *inserted);
bd_result sq_pastes_of_email(bd_store *base, bd_slice email, bd_paste_cb cb, void *ctx);
bd_result sq_email_hashes_sync(bd_store *base, int64_t *added);
bd_result sq_email_hashes_range(bd_store *base, const char prefix[7], bd_email_hash_cb cb,
                                void *ctx);
bd_result sq_email_hash_forget(bd_store *base, bd_slice email);
bd_result sq_stealer_logs(bd_store *base, bd_stealer_by by, bd_slice key, int64_t max,
                          bd_stealer_cb cb, void *ctx);
bd_result sq_domain_breaches(bd_store *base, bd_slice domain, int64_t max_records, bd_domain_cb cb,
                             void *ctx, int64_t *records);
/* Runs what a migration's SQL asked for in meta and SQL cannot do (the Names of breaches
 * stored before they had one; the end of the CVV migration when no CVV is in clear),
 * inside the migration's transaction. */
bd_result sq_migration_notes(sqlite_store *s);

/* records.c */
bd_result sq_record_put(bd_store *base, const bd_record_in *r, bool *inserted);
bd_result sq_record_search(bd_store *base, bd_record_query *q, bd_record_cb cb, void *ctx,
                           int64_t *found);

/* cards.c */
bd_result sq_card_put(bd_store *base, const bd_card_in *c, bool *inserted);
bd_result sq_card_search(bd_store *base, const bd_card_query *q, int64_t *found, bd_card_cb cb,
                         void *ctx);
bd_result sq_cvv_upgrade(bd_store *base, bd_cvv_protect_fn protect, void *ctx, int64_t *changed);
/* The CVV migration's note: taken away, with the index of plain CVVs, when no card holds one
 * (called by sq_migration_notes, in the migration's transaction). */
bd_result sq_cvv_note(sqlite_store *s);

/* keys.c */
bd_result sq_key_add(bd_store *base, const bd_key_row *k, int64_t *id);
bd_result sq_key_list(bd_store *base, bd_key_cb cb, void *ctx);
bd_result sq_key_revoke(bd_store *base, int64_t id, int64_t now);
bd_result sq_key_generation(bd_store *base, int64_t *gen);
bd_result sq_rate_take(bd_store *base, int kind, int64_t id, int64_t now_us, int64_t share_us,
                       int64_t depth_us, int64_t want, int64_t *granted, int64_t *tat_us);
bd_result sq_rate_give_back(bd_store *base, int kind, int64_t id, int64_t count, int64_t share_us);

/* keys.c (the quota) and usage.c (the counters) */
bd_result sq_key_set_quota(bd_store *base, int64_t id, int64_t quota_per_month);
bd_result sq_key_set_job_limits(bd_store *base, int64_t id, int64_t max_jobs,
                                int64_t max_queued_identities, int64_t max_result_rows);
bd_result sq_key_get(bd_store *base, int64_t id, bd_key_row *out);
bd_result sq_usage_add(bd_store *base, int64_t key_id, int32_t day, int64_t count, int64_t quota,
                       int64_t *added, int64_t *month_total);
bd_result sq_usage_give_back(bd_store *base, int64_t key_id, int32_t day, int64_t count);
bd_result sq_usage_get(bd_store *base, int64_t key_id, int32_t day, int64_t *day_total,
                       int64_t *month_total);

/* ranges.c */
bd_result sq_range_get(bd_store *base, bd_range_mode mode, uint32_t prefix, bd_range_cb cb,
                       void *ctx);
bd_result sq_range_load(bd_store *base, bd_range_mode mode, const uint8_t *hash, uint32_t count);

/* Watches (watches.c) and the alerts outbox (alerts.c). */
bd_result sq_watch_add(bd_store *base, const bd_watch_row *w, int64_t max_per_key, int64_t *id);
bd_result sq_watch_list(bd_store *base, int64_t key_id, int64_t live_at, bd_watch_cb cb, void *ctx);
bd_result sq_watch_remove(bd_store *base, int64_t key_id, int64_t id);
bd_result sq_watch_generation(bd_store *base, int64_t *gen);
bd_result sq_alert_add(bd_store *base, const bd_alert_in *a);
bd_result sq_alert_list(bd_store *base, int64_t key_id, int64_t after, int limit, bd_alert_cb cb,
                        void *ctx);
bd_result sq_alert_triage(bd_store *base, int64_t key_id, bd_slice event_id, int triage);
bd_result sq_session_end(bd_store *base, bd_slice id, int64_t until_at, int64_t now);
bd_result sq_session_ended(bd_store *base, bd_slice id, bool *ended);
bd_result sq_alert_lease(bd_store *base, int64_t now_ms, int64_t lease_ms, int limit,
                         bd_alert_cb cb, void *ctx);
bd_result sq_alert_settle(bd_store *base, int64_t seq, bd_alert_state state, int64_t attempts,
                          int64_t next_ms);
bd_result sq_alert_prune(bd_store *base, int64_t before_s, int limit, int64_t *removed);
void sq_on_landed(bd_store *base, bd_landed_cb cb, void *ctx);
/* Writes the outcomes delivery kept and frees its state (at close). */
typedef struct sq_outbox sq_outbox;
void sq_outbox_free(sqlite_store *s);
/* Erasures (admin.c): an email's copies in alerts become "[erased]"; a breach's alerts lose
 * their identities. Inside the erasure's transaction. */
bd_result sq_alerts_erase_email(sqlite_store *s, const char *email);
bd_result sq_alerts_erase_breach(sqlite_store *s, const char *uuid);
bd_result sq_flush(bd_store *base);
/* Tell the landed callback (set: s->landed not NULL) of a record or card that went in. */
void sq_landed_record(sqlite_store *s, int64_t breach_id, const bd_record_in *r);
void sq_landed_card(sqlite_store *s, const bd_card_in *c);
/* records.c: bulk lookups */
bd_result sq_record_ids(bd_store *base, bd_field field, const bd_slice *keys, size_t n, int limit,
                        bd_record_id_cb cb, void *ctx, int64_t scope_tenant);
bd_result sq_records_by_id(bd_store *base, const int64_t *ids, size_t n, bd_record_cb cb,
                           void *ctx);

/* jobs.c */
bd_result sq_job_create(bd_store *base, const bd_job_row *j, const bd_slice *chunks, size_t nchunks,
                        const bd_job_limits *lim, bd_job_usage *usage);
bd_result sq_job_usage(bd_store *base, int64_t key_id, bd_job_usage *out);
bd_result sq_job_get(bd_store *base, const char *uuid, int64_t key_id, bd_job_row *out);
bd_result sq_job_claim(bd_store *base, int64_t now, int64_t lease_s, bd_job_row *out);
bd_result sq_job_yield(bd_store *base, const char *uuid, int64_t lease);
bd_result sq_job_next_chunk(bd_store *base, const char *uuid, int64_t from, int64_t *chunk_no,
                            bd_buf *inputs);
bd_result sq_job_chunk_done(bd_store *base, const char *uuid, int64_t lease,
                            const bd_job_chunk_out *c);
bd_result sq_job_finish(bd_store *base, const char *uuid, int64_t lease, bd_job_status status,
                        int64_t now);
bd_result sq_job_result(bd_store *base, const char *uuid, int64_t chunk_no, bd_buf *out);
bd_result sq_job_expire(bd_store *base, int64_t before, int64_t *removed);
/* Merges the hashes the open transaction wrote into their buckets (before its commit). */
bd_result sq_range_flush(sqlite_store *s);

/* admin.c */
bd_result sq_stats(bd_store *base, bd_stats_cb cb, void *ctx, int64_t *total_records,
                   int64_t *total_cards);
bd_result sq_erase_email(bd_store *base, const char *email, bd_stats_cb cb, void *ctx,
                         int64_t *removed);
bd_result sq_erase_breach(bd_store *base, const char *uuid, int64_t *records_removed);
bd_result sq_truncate_log(bd_store *base, int64_t wait_ms);
bd_result sq_backup(bd_store *base, const char *dest, int dest_fd);

/* changes.c */
bd_result sq_changes(bd_store *base, int64_t after, int limit, bd_change_cb cb, void *ctx);
bd_result sq_change_version(bd_store *base, int64_t *version);
bd_result sq_status_get(bd_store *base, bd_store_status *out);
/* queues.c */
bd_result sq_queue_depths(bd_store *base, bd_store_queues *out);

/* The operations table of ops.c, and the two members conn.c implements beside opening. */
extern const bd_store_ops bd_sqlite_ops;
/* Opens a connection whose base carries ops (the store front's bd_sqlite_open passes its
 * table); the failure's reason in why. */
bd_result sq_connect(const char *path, int flags, const bd_store_ops *ops, bd_store **out,
                     char *why, size_t whylen);
void sq_loaded(bd_store *base, bd_bulk_kind kind, int64_t rows);
int64_t sq_take_late_duplicates(bd_store *s);

/* tenants.c: tenants, their domains, key changes; audit.c: the audit trail and the lookup log */
bd_result sq_key_change(bd_store *s, int64_t id, const bd_key_change *c);
bd_result sq_tenant_add(bd_store *s, bd_slice name, int64_t now, int64_t *id);
bd_result sq_tenant_list(bd_store *s, bd_tenant_cb cb, void *ctx);
bd_result sq_tenant_get(bd_store *s, int64_t id, bd_tenant_row *out);
bd_result sq_tenant_rename(bd_store *s, int64_t id, bd_slice name);
bd_result sq_tenant_remove(bd_store *s, int64_t id);
bd_result sq_tenant_domain_add(bd_store *s, int64_t id, bd_slice domain);
bd_result sq_tenant_domain_remove(bd_store *s, int64_t id, bd_slice domain);
bd_result sq_tenant_domains(bd_store *s, int64_t id, bd_tenant_domain_cb cb, void *ctx);
bd_result sq_audit_add(bd_store *s, const bd_audit_row *r, int64_t *id);
bd_result sq_audit_list(bd_store *s, int64_t before, int limit, bd_audit_cb cb, void *ctx);
bd_result sq_lookup_add(bd_store *s, const bd_lookup_row *rows, size_t n);
bd_result sq_lookup_find(bd_store *s, const uint8_t hash[32], int limit, bd_lookup_cb cb,
                         void *ctx);
bd_result sq_lookup_expire(bd_store *s, int64_t before_at, int64_t *deleted);

#endif
