/* Private to the PostgreSQL backend (src/store/pg/): the connection, its prepared
 * statements and the helpers every file uses to run them.
 *
 * Every statement is prepared once per connection (PQprepare, on first use) and run with
 * PQexecPrepared; values are always bound parameters, never part of the SQL text. Text and
 * bytea values are sent in binary format (for text that is the bytes themselves, so a
 * slice needs no NUL), integers as decimal text. Results come back as text (an email search's
 * in binary: records.c).
 *
 * Connection loss: outside a transaction, a statement that finds the connection closed
 * reconnects (PQreset) and runs once more, so a restarted server is picked up again
 * without reopening the store and without a failed call; when that fails too, or inside a
 * transaction, the call returns BD_ERR_BUSY, and the next call outside a transaction tries
 * again. Statements are prepared again on the new connection. */
#ifndef BD_STORE_PG_PG_IMPL_H
#define BD_STORE_PG_PG_IMPL_H

#include <libpq-fe.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/buf.h"
#include "store/ranges.h"
#include "store/store_impl.h"

/* The fixed statements; the name sent to the server is "bd<n>". */
typedef enum {
    PG_Q_META_GET,
    PG_Q_META_SET,
    PG_Q_VERSION_BUMP,
    PG_Q_PING,
    PG_Q_ROUTED,
    PG_Q_BREACH_PUT,
    PG_Q_BREACH_LIST,
    PG_Q_BREACH_LIST_LIMIT,
    PG_Q_BREACH_GET,
    PG_Q_BREACH_BY_ID,
    PG_Q_BREACH_ID,
    PG_Q_BREACH_NEWEST,
    PG_Q_BREACH_DISTINCT,
    PG_Q_BREACH_NAME_TAKEN,
    PG_Q_BREACH_UNNAMED,
    PG_Q_BREACH_SET_NAME,
    PG_Q_BREACH_BY_NAME,
    PG_Q_BREACHES_OF_EMAIL,
    PG_Q_DOMAIN_BREACHES,
    PG_Q_META_DELETE,
    PG_Q_RECORD_PUT,
    PG_Q_KEY_ADD,
    PG_Q_KEY_LIST,
    PG_Q_KEY_REVOKE,
    PG_Q_KEY_BUMP,
    PG_Q_KEY_SET_QUOTA,
    PG_Q_KEY_SET_JOB_LIMITS,
    PG_Q_KEY_GET,
    PG_Q_USAGE_ADD,
    PG_Q_USAGE_GET,
    PG_Q_USAGE_GIVE_BACK,
    PG_Q_STATS,
    PG_Q_COUNT_RECORDS,
    PG_Q_COUNT_CARDS,
    PG_Q_ERASE_EMAIL_BREACHES,
    PG_Q_ERASE_EMAIL_DOMAINS,
    PG_Q_ERASE_EMAIL,
    PG_Q_ERASE_BREACH_DOMAINS,
    PG_Q_DOMAINS_TAKE,
    PG_Q_ERASE_BREACH_RECORDS,
    PG_Q_ERASE_BREACH_EMAIL_HASHES,
    PG_Q_ERASE_BREACH,
    PG_Q_ERASE_EMPTY_DOMAINS,
    PG_Q_ERASE_EMAIL_ROUTES,
    PG_Q_ERASE_BREACH_ROUTES,
    PG_Q_CARD_PUT,
    PG_Q_RATE_TAKE,
    PG_Q_RATE_GIVE_BACK,
    PG_Q_RANGE_GET,
    PG_Q_MAX_RECORD,
    PG_Q_MAX_CARD,
    PG_Q_CHANGE_ADD,
    PG_Q_CHANGE_BREACH,
    PG_Q_CHANGES_RECORDS,
    PG_Q_CHANGES_CARDS,
    PG_Q_CHANGES_LIST,
    PG_Q_CHANGE_VERSION,
    PG_Q_STATUS,
    PG_Q_BREACH_COUNT,
    PG_Q_BREACH_SET_COUNT,
    PG_Q_BREACH_RECORDS,
    PG_Q_RECORDS_LAST_ID,
    PG_Q_JOB_PUT,
    PG_Q_JOB_CHUNK_PUT,
    PG_Q_JOB_GET,
    PG_Q_JOB_CLAIM,
    PG_Q_JOB_YIELD,
    PG_Q_JOB_USAGE,
    PG_Q_JOB_USAGE_OF,
    PG_Q_JOB_LOCK_KEY,
    PG_Q_JOB_LOCK_KEY_OF,
    PG_Q_JOB_NEXT_CHUNK,
    PG_Q_JOB_PROGRESS,
    PG_Q_JOB_CHUNK_RESULTS,
    PG_Q_JOB_FINISH,
    PG_Q_JOB_RESULT,
    PG_Q_JOB_EXPIRE,
    PG_Q_KEY_CHANGE,
    PG_Q_TENANT_ADD,
    PG_Q_TENANT_LIST,
    PG_Q_TENANT_GET,
    PG_Q_TENANT_RENAME,
    PG_Q_TENANT_REMOVE,
    PG_Q_DOMAIN_CLASH,
    PG_Q_DOMAIN_ADD,
    PG_Q_DOMAIN_REMOVE,
    PG_Q_DOMAINS_OF,
    PG_Q_DOMAINS_ALL,
    PG_Q_AUDIT_ADD,
    PG_Q_AUDIT_LIST,
    PG_Q_LOOKUP_ADD,
    PG_Q_LOOKUP_FIND,
    PG_Q_LOOKUP_EXPIRE,
    PG_Q_EMAIL_FIRST,        /* an email search's first page (records.c) */
    PG_Q_EMAIL_NEXT,         /* ... a page after a position */
    PG_Q_EMAIL_FIRST_ROUTED, /* the same, naming the owner key (a routed store) */
    PG_Q_EMAIL_NEXT_ROUTED,
    PG_Q__COUNT
} pg_q;

/* A fixed statement: its number and its SQL, defined next to the code that runs it. */
typedef struct {
    pg_q id;
    const char *sql;
} pg_stmt;

#define PG_DYN_CACHE 32 /* generated record-search statements kept prepared */
/* A power of two. Every miss is a statement, and a statement ends the COPY that streams a
 * batch's records: the cache must hold every breach of an import without collisions. */
#define PG_BREACH_CACHE 4096
#define PG_BREACH_PROBES 8

#define PG_COPY_MISSING 8 /* breaches a transaction's record puts found missing */

/* Record and card puts streamed into the open write transaction (copy.c). */
/* The _BULK kinds stream into records or cards themselves, with no staging table and no
 * move: a bulk load has dropped the unique keys and removes duplicates at its end (bulk.c).
 * A bulk card load's word rows wait in memory, then go in with COPYs of their own. */
typedef enum {
    PG_STAGE_RECORDS,
    PG_STAGE_CARDS,
    PG_STAGE_RECORDS_BULK,
    PG_STAGE_CARDS_BULK,
    PG_STAGE_CARD_WORDS,
    PG_STAGE_OWNER_WORDS,
    PG_STAGE_PASSWORDS_BULK, /* a bulk record load's password hashes, by record key */
    PG_STAGE_RECORD_DOMAINS, /* a bulk record load's record_domains rows */
    PG_STAGE__COUNT
} pg_stage_kind;

typedef struct {
    bool open;                   /* a COPY into a staging table is in progress */
    pg_stage_kind kind;          /* ... into this one */
    bool table[PG_STAGE__COUNT]; /* the staging table exists on this connection */
    bool dirty[PG_STAGE__COUNT]; /* it holds rows this transaction already moved */
    int64_t staged;              /* rows sent by the open COPY */
    int64_t pending_late;        /* duplicates this transaction found (moves, dedup) */
    int64_t late;                /* ... by transactions committed since the last take */
    bd_buf out;                  /* rows not yet handed to libpq */
    bd_buf word_rows;            /* a bulk card load's card_words rows ... */
    bd_buf owner_word_rows;      /* ... and card_owner_words rows, not yet sent */
    bd_buf password_rows;        /* a bulk record load's password hashes, not yet sent */
    int64_t passwords_staged;    /* ... and how many it sent (bulk.c counts those that
                                    went in at its end) */
    bd_buf domain_rows;          /* a bulk record load's record_domains rows, not yet sent */
    bd_slice *wordv;             /* scratch: one card's owner words, sorted */
    size_t wordv_cap;
    /* breaches found missing in this transaction: a put naming one fails without ending
     * the COPY (no other writer can add a breach while the writer lock is held) */
    char missing[PG_COPY_MISSING][BD_UUID_LEN + 1];
    int next_missing;
} pg_copy_state;

/* A bulk record load's records per breach (load_counts.c): what it put into each, less the
 * duplicates its end removed, i.e. the records past `after` (its first id) by breach. Known
 * from the load's begin to its transaction's end; forgotten by any other record put, and
 * when the table cannot grow (then the records are counted in the table instead). */
struct pg_load_count {
    int64_t breach_id; /* 0: free slot */
    int64_t n;
};
typedef struct {
    struct pg_load_count *slot;
    size_t cap, used;
    bool known;
    int64_t after;
} pg_load_counts;

/* A card search being written (cards.c, cards_sql.c): its SQL, the elements of its values
 * array, and the scratch its word conditions need. One per connection, reset by each search,
 * so a search reuses the storage of the one before. */
typedef struct {
    bd_buf sql;
    bd_buf vals; /* the array in binary format: a 20-byte header, then each element */
    int nvals;
    bd_result err;
    bd_buf words;      /* a word condition's words, split as the index splits them */
    bd_buf text;       /* ... its terms joined, before splitting */
    bd_buf end;        /* the end of a word prefix's range */
    bd_buf owner_word; /* the owner word of an owner-word-in-expiry-order search */
} pg_card_sql;

typedef struct pg_store {
    bd_store base; /* first: the front's bd_store * is this struct */
    PGconn *conn;
    bool prepared[PG_Q__COUNT];
    struct {
        char *sql; /* NULL: free slot */
        uint64_t used;
    } dyn[PG_DYN_CACHE];
    uint64_t tick;
    pg_card_sql card; /* the card search being written */
    bool in_tx;       /* between begin and commit/rollback */
    bool in_read;     /* between read_begin and read_end */
    bool has_version;
    uint64_t version;           /* data_version of the open read view, once read */
    bool bulk_records;          /* records stream into their table; bulk_end dedups and recounts */
    int64_t bulk_first_id;      /* ... the records with a greater id are the load's */
    int64_t bulk_next_id;       /* ... the id the load gives its next record */
    bool bulk_cards;            /* cards stream into their table; bulk_end dedups and recounts */
    int64_t bulk_first_card_id; /* ... the cards with a greater id are the load's */
    int64_t bulk_next_card_id;  /* the last id the load gave a card */
    bool read_only;             /* opened BD_STORE_READ: every transaction is read-only */
    /* Searches that a lookup table routes (a domain's, a BIN page, an owner word's page in
     * expiry order) run as two statements, each on one shard of a Citus cluster or a few,
     * instead of one: on a Citus coordinator, or where the session has
     * breachd.routed_searches on (pg_session_setup; docs/SCALING.md). */
    bool routed;
    /* The database is a Citus coordinator's (the citus extension): pg_session_setup. Where
     * a statement Citus cannot distribute has a form it can, the store uses that form. */
    bool citus;
    /* a reading session on a coordinator: email searches go to the worker that holds their
     * shard (direct.c), unless breachd.direct_reads is off; NULL otherwise */
    struct pg_direct *direct;
    bool direct_reads; /* breachd.direct_reads is not off (pg_session_detect) */
    bool bulk_plain_said; /* the log said once that --bulk loads as a plain import here */
    /* breaches looked up by record_put, by a hash of their uuid; filled with the newest
     * breaches at the first miss, emptied when a breach is erased or a transaction rolls
     * back (it may name a breach that is gone) */
    struct {
        char uuid[BD_UUID_LEN + 1];
        int64_t id;
        int32_t date;
    } breach_cache[PG_BREACH_CACHE];
    bool breach_cache_loaded;
    uint64_t written_version;  /* the data version after this connection's last write */
    bool breach_cache_checked; /* against it, in the open write transaction */
    bd_buf sql;                /* scratch for generated SQL */
    bd_buf where;    /* ... and for a WHERE clause it uses twice, or a page's keys (records.c) */
    bd_buf words[2]; /* a staged card's owner and bank words */
    pg_copy_state copy;
    pg_load_counts load_counts; /* a bulk record load's, for the change log and settling */
    /* set at connect (conn.c) to copy.c's: every statement first ends an open COPY and moves
     * its rows (exec.c), and a reset connection forgets its staging table; hooks, so that
     * the statement runner below copy.c never calls up into it */
    bd_result (*copy_flush)(struct pg_store *p);
    void (*copy_reset)(struct pg_store *p);
    /* password hashes of the open write transaction, merged into their buckets before it
     * commits (ranges.c); a move adds those of the records that went in */
    bd_range_acc ranges;
    bd_buf range_rows; /* the merged buckets of one flush, as COPY rows */
    /* the change log (changes.c): the largest record and card ids before the open write
     * transaction's first put of each, -1 before it */
    int64_t tx_records_from, tx_cards_from;
    /* bd_store_on_landed: told of every record or card that goes in (by a move) */
    bd_landed_cb landed;
    void *landed_ctx;
} pg_store;

static inline pg_store *pg_of(bd_store *s)
{
    return (pg_store *)s;
}

/* Bound parameters of one statement. Slices and C strings are borrowed: they must live
 * until the statement has run. */
#define PG_MAX_PARAMS 32
typedef struct pg_params {
    int n;
    const char *values[PG_MAX_PARAMS];
    int lengths[PG_MAX_PARAMS];
    int formats[PG_MAX_PARAMS];
    char ints[PG_MAX_PARAMS][24];
    int result_format; /* 0: results as text (the default), 1: binary */
} pg_params;

/* Appenders; a slice or string with ptr NULL is SQL NULL. */
void pg_param_text(pg_params *pp, bd_slice v); /* text (or bytea) bytes */
void pg_param_str(pg_params *pp, const char *v);
void pg_param_int(pg_params *pp, int64_t v);

/* Runs fixed statement q. On BD_OK, *res (when res is not NULL) holds the result, which the
 * caller PQclears; on failure nothing needs clearing. BD_ERR_BUSY when the server cannot be
 * reached, BD_ERR_EXISTS on a uniqueness conflict, BD_ERR_STORE otherwise. */
bd_result pg_run(pg_store *p, const pg_stmt *q, const pg_params *pp, PGresult **res);
/* The same for generated SQL: prepared on first use and kept in a small per-connection
 * cache (keyed by the text) when prepare is true; run unnamed otherwise, so the server plans
 * it for these very values. */
bd_result pg_run_sql(pg_store *p, const char *sql, const pg_params *pp, bool prepare,
                     PGresult **res);
/* Maps a failed result (NULL: the connection's own error) to BD_ERR_BUSY, BD_ERR_EXISTS or
 * BD_ERR_STORE as the run functions do, reports it when it is not the server's absence or
 * an expected conflict, and clears it. */
bd_result pg_failed(pg_store *p, PGresult *res);
/* Appends v to out as an element of a text array literal: quoted, \ before " and \. */
bd_result pg_array_text(bd_buf *out, bd_slice v);
/* Runs SQL without parameters (transaction control, DDL; several statements allowed). */
bd_result pg_exec(pg_store *p, const char *sql);
/* Whether searches are routed and the database is a Citus coordinator's (p->routed,
 * p->citus). */
bd_result pg_session_detect(pg_store *p);
/* The session settings for what pg_session_detect found. */
bd_result pg_session_settings(pg_store *p);
/* Both, for a new or reset connection. */
bd_result pg_session_setup(pg_store *p);

/* The number of rows a command changed (PQcmdTuples). */
int64_t pg_changes(PGresult *res);
/* Field (row, col) of a result: a slice into res (ptr NULL for SQL NULL), or a number. */
bd_slice pg_slice(const PGresult *res, int row, int col);
/* An integer as PostgreSQL prints one (an optional minus, then digits), read up to the
 * first other byte; 0 when there is no digit. Out of int64_t's range: its nearest end. */
int64_t pg_int_text(const char *v);
int64_t pg_int(const PGresult *res, int row, int col);

/* Runs a write as its own transaction when none is open, so that it bumps the data
 * version like every write: write_begin notes whether it opened one, write_end commits it
 * (or rolls it back when r is not BD_OK) and returns the outcome. */
bd_result pg_write_begin(pg_store *p, bool *own);
bd_result pg_write_end(pg_store *p, bool own, bd_result r);

/* A search's column holding the data version its rows were read at, so that the search
 * needs no query of its own for it; pg_note_version keeps the value for the read in
 * progress (bd_store_data_version then answers without a query). */
#define PG_DATA_VERSION_SQL "(SELECT value FROM meta WHERE key = 'data_version')"
void pg_note_version(pg_store *p, bd_slice value);

/* Transactions (store.h contract), used by other operations of the backend too. */
bd_result pg_begin(bd_store *s);
bd_result pg_commit(bd_store *s);
void pg_rollback(bd_store *s);

/* Streaming record puts (copy.c). pg_copy_put stages one record of an existing breach in
 * the open write transaction; pg_copy_flush ends an open COPY and moves the staged rows into
 * records (the run functions call it before any statement, pg_commit before committing). */
bd_result pg_copy_put(pg_store *p, int64_t breach_id, int32_t date, const bd_record_in *r);
/* The same for a card, with its owner's and bank's words (see cards_sql.h). */
bd_result pg_copy_put_card(pg_store *p, const bd_card_in *c, bd_slice owner_words,
                           bd_slice bank_words);
bd_result pg_copy_flush(pg_store *p);
bool pg_copy_missing(pg_store *p, const char *uuid);
void pg_copy_note_missing(pg_store *p, const char *uuid);
void pg_copy_forget_missing(pg_store *p); /* a breach was added */
/* The transaction ended: a COPY still open is abandoned (a rollback), and the duplicates
 * the moves found count for pg_take_late_duplicates only when it committed. */
void pg_copy_end_transaction(pg_store *p, bool committed);
void pg_copy_connection_reset(pg_store *p); /* the staging table went with the connection */
int64_t pg_take_late_duplicates(bd_store *s);
/* A bulk record load's end: adds the password hashes of the records of the load that
 * survived its dedup (ids past first_id) to the ranges; all_went_in: none was removed, so
 * every staged hash counts. */
bd_result pg_copy_count_bulk_passwords(pg_store *p, int64_t first_id, bool all_went_in);
/* A bulk load's end, after its duplicates are gone: tells the landed callback (if any) of
 * the records (or cards) of the load that stayed, those with an id past first_id. */
bd_result pg_copy_land_bulk(pg_store *p, bool cards, int64_t first_id);
/* Duplicates the open transaction found outside a move (a bulk load's dedup, conn.c). */
void pg_copy_note_duplicates(pg_store *p, int64_t n);

/* The COPY binary format (copy_format.c). Fields: an integer of size 2, 4 or 8 bytes; a
 * text or bytea (its length and bytes, or -1 for NULL: ptr NULL); a row's field count. */
bd_result pg_copy_put_u16(bd_buf *b, uint16_t v);
/* The binary format's file header, which every COPY of it sends first. */
#define PG_COPY_HEADER_LEN 19
extern const char pg_copy_binary_header[PG_COPY_HEADER_LEN];
/* Runs copy_sql (a COPY ... FROM STDIN (FORMAT binary)) with rows as its whole content: the
 * header, rows (each with its field count, as pg_copy_put_* write them), the trailer
 * (copy_in.c). BD_ERR_BUSY when the connection was lost, pg_failed's mapping otherwise. */
bd_result pg_copy_in(pg_store *p, const char *copy_sql, const bd_buf *rows);
/* After PQputCopyEnd: reads a COPY's results to the end, r unless the server refused it
 * (pg_failed's mapping) or the connection was lost (BD_ERR_BUSY) (copy_in.c). */
bd_result pg_copy_outcome(pg_store *p, bd_result r);
bd_result pg_copy_put_int(bd_buf *b, int64_t v, int size);
bd_result pg_copy_put_bytes(bd_buf *b, bd_slice v);
/* A record's columns from ok to dedup (the records table's, in copy.c's RECORD_COLUMNS
 * order), with its owner key ok (PG_OWNER_KEY_LEN bytes). */
bd_result pg_copy_record_columns(bd_buf *b, const uint8_t *ok, int64_t breach_id, int32_t date,
                                 const bd_record_in *r);
/* A bulk-loaded record's password row (ok, dedup, pw_sha1, pw_ntlm); nothing on failure. */
bd_result pg_copy_password_row(bd_buf *b, const uint8_t *ok, const bd_record_in *r);
/* A bulk-loaded record's record_domains row (domain, ok, id, breach_date, present: the
 * bits of PG_RECORD_PRESENT_SQL); none for a record without an email domain; nothing on
 * failure. */
bd_result pg_copy_domain_row(bd_buf *b, const uint8_t *ok, int64_t id, int32_t date,
                             const bd_record_in *r);
/* A card's columns, in copy.c's CARD_COLUMNS order. */
bd_result pg_copy_card_columns(bd_buf *b, const bd_card_in *c);
/* A bulk-loaded card's rows of card_words (col, word, id, pos) into cs->word_rows and, for a
 * card with an expiry, of card_owner_words (word, expire_date, card_id; each owner word
 * once) into cs->owner_word_rows; on failure neither keeps any of them. */
bd_result pg_copy_card_word_rows(pg_copy_state *cs, int64_t id, const bd_card_in *c,
                                 bd_slice owner_words, bd_slice bank_words);
/* A binary result field: NULL's ptr is NULL. */
bd_slice pg_copy_binary_field(const PGresult *res, int row, int col);
/* Tells the landed callback of row i of a binary result with copy.c's landed record columns
 * (what watches match on, from the third column on). */
void pg_copy_landed_record(pg_store *p, const PGresult *res, int i);

/* load_counts.c: begin (the load's records are those past after), add n records of a
 * breach (n < 0: removed), forget (the transaction ended, or another record put), free. */
void pg_load_counts_begin(pg_store *p, int64_t after);
void pg_load_counts_add(pg_store *p, int64_t breach_id, int64_t n);
void pg_load_counts_forget(pg_store *p);
void pg_load_counts_free(pg_store *p);
/* *known: whether the counts are known for the records past after; if so, the breach ids
 * and their counts (breaches left with none left out) as two array literals, in one order,
 * appended to ids and ns. */
bd_result pg_load_counts_arrays(pg_store *p, int64_t after, bd_buf *ids, bd_buf *ns, bool *known);

/* Schema: brings the database to the newest version (schema.c). */
bd_result pg_migrate(pg_store *p, bool create, const char *shown_uri, char *why, size_t whylen);
/* bd_store_distribute (citus.c) */
bd_result pg_distribute(bd_store *s, bool *clustered, bd_layout_cb cb, void *ctx);
/* CREATE INDEX statements of the record lookup indexes. */
extern const char *const pg_record_indexes;
/* CREATE INDEX statements of the card lookup indexes, which a bulk card load may drop and
 * rebuild like the record ones (card_put keeps the word and count tables meanwhile). */
extern const char *const pg_card_indexes;

/* A record's lookup row in record_domains, which routes a domain search to one shard of a
 * Citus cluster (docs/SCALING.md): bit f of `present` is set when the record has field f
 * (bd_field order), for the =yes and =no filters. Over a records row, columns unqualified. */
#define PG_RECORD_PRESENT_BITS_9                                                                   \
    "(email IS NOT NULL)::int | 2 | ((phone_key IS NOT NULL)::int << 2)"                           \
    " | ((user_name_key IS NOT NULL)::int << 3) | ((ip_address IS NOT NULL)::int << 4)"            \
    " | ((ssn_hmac IS NOT NULL)::int << 5) | ((password_hmac IS NOT NULL)::int << 6)"              \
    " | ((password_hash IS NOT NULL)::int << 7) | ((bitcoin_address IS NOT NULL)::int << 8)"
/* The migration that made record_domains ran before records had website_domain (bit 9). */
#define PG_RECORD_PRESENT_SQL_9 "(" PG_RECORD_PRESENT_BITS_9 ")::smallint"
#define PG_RECORD_PRESENT_SQL                                                                      \
    "(" PG_RECORD_PRESENT_BITS_9 " | ((website_domain IS NOT NULL)::int << 9))::smallint"

/* The owner key (owner.c): what records are distributed by in a Citus cluster, and so
 * what an email search and an email's erasure name besides the email. */
#define PG_OWNER_KEY_LEN 16
void pg_owner_key(const bd_record_in *r, uint8_t out[PG_OWNER_KEY_LEN]);
void pg_email_owner_key(bd_slice email, uint8_t out[PG_OWNER_KEY_LEN]);
/* The same digest in SQL, over a records row (migration 8 fills the column with it). */
extern const char *const pg_owner_key_sql;

/* The change log (changes.c), as the SQLite backend's: note_put before a put in a write
 * transaction (before any COPY of it opens), flush just before COMMIT (after the COPYs
 * moved), forget after a commit or rollback; one row about a breach (changed: its count is
 * read from the table). */
bd_result pg_changes_note_put(pg_store *p, bool cards);
bd_result pg_changes_flush(pg_store *p);
void pg_changes_forget(pg_store *p);
bd_result pg_change_breach(pg_store *p, bd_change_kind kind, const char *uuid, int64_t n);
bd_result pg_changes_list(bd_store *s, int64_t after, int limit, bd_change_cb cb, void *ctx);
bd_result pg_change_version(bd_store *s, int64_t *version);
bd_result pg_status_get(bd_store *s, bd_store_status *out);
/* queues.c */
bd_result pg_queue_depths(bd_store *s, bd_store_queues *out);

/* The operations, by file. */
bd_result pg_watch_add(bd_store *s, const bd_watch_row *w, int64_t max_per_key, int64_t *id);
bd_result pg_watch_list(bd_store *s, int64_t key_id, int64_t live_at, bd_watch_cb cb, void *ctx);
bd_result pg_watch_remove(bd_store *s, int64_t key_id, int64_t id);
bd_result pg_watch_generation(bd_store *s, int64_t *gen);
bd_result pg_alert_add(bd_store *s, const bd_alert_in *a);
bd_result pg_alert_list(bd_store *s, int64_t key_id, int64_t after, int limit, bd_alert_cb cb,
                        void *ctx);
bd_result pg_alert_triage(bd_store *s, int64_t key_id, bd_slice event_id, int triage);
bd_result pg_session_end(bd_store *s, bd_slice id, int64_t until_at, int64_t now);
bd_result pg_session_ended(bd_store *s, bd_slice id, bool *ended);
bd_result pg_alert_lease(bd_store *s, int64_t now_ms, int64_t lease_ms, int limit, bd_alert_cb cb,
                         void *ctx);
bd_result pg_alert_settle(bd_store *s, int64_t seq, bd_alert_state state, int64_t attempts,
                          int64_t next_ms);
bd_result pg_alert_prune(bd_store *s, int64_t before_s, int limit, int64_t *removed);
void pg_on_landed(bd_store *s, bd_landed_cb cb, void *ctx);
bd_result pg_flush(bd_store *s);
/* Erasures (admin.c): an email's copies in alerts become "[erased]"; a breach's alerts lose
 * their identities. Inside the erasure's transaction. */
bd_result pg_alerts_erase_email(pg_store *p, const char *email);
bd_result pg_alerts_erase_breach(pg_store *p, const char *uuid);
bd_result pg_bulk_begin(bd_store *s, bd_bulk_kind kind);
bd_result pg_bulk_end(bd_store *s, bd_bulk_kind kind);
void pg_loaded(bd_store *s, bd_bulk_kind kind, int64_t rows);
bd_result pg_breach_put(bd_store *s, const bd_breach_in *b, bool *inserted);
/* jobs.c */
bd_result pg_job_create(bd_store *s, const bd_job_row *j, const bd_slice *chunks, size_t nchunks,
                        const bd_job_limits *lim, bd_job_usage *usage);
bd_result pg_job_usage(bd_store *s, int64_t key_id, bd_job_usage *out);
bd_result pg_job_get(bd_store *s, const char *uuid, int64_t key_id, bd_job_row *out);
bd_result pg_job_claim(bd_store *s, int64_t now, int64_t lease_s, bd_job_row *out);
bd_result pg_job_yield(bd_store *s, const char *uuid, int64_t lease);
bd_result pg_job_next_chunk(bd_store *s, const char *uuid, int64_t from, int64_t *chunk_no,
                            bd_buf *inputs);
bd_result pg_job_chunk_done(bd_store *s, const char *uuid, int64_t lease,
                            const bd_job_chunk_out *c);
bd_result pg_job_finish(bd_store *s, const char *uuid, int64_t lease, bd_job_status status,
                        int64_t now);
bd_result pg_job_result(bd_store *s, const char *uuid, int64_t chunk_no, bd_buf *out);
/* records.c: bulk lookups */
bd_result pg_record_ids(bd_store *s, bd_field field, const bd_slice *keys, size_t n, int limit,
                        bd_record_id_cb cb, void *ctx, int64_t scope_tenant);
bd_result pg_records_by_id(bd_store *s, const int64_t *ids, size_t n, bd_record_cb cb, void *ctx);
bd_result pg_job_expire(bd_store *s, int64_t before, int64_t *removed);
bd_result pg_breach_list(bd_store *s, int limit, bd_breach_cb cb, void *ctx);
bd_result pg_breach_by_id(bd_store *s, int64_t id, bd_breach_cb cb, void *ctx);
bd_result pg_breach_get(bd_store *s, const char *uuid, bd_breach_cb cb, void *ctx);
bd_result pg_breach_exists(bd_store *s, const char *uuid, bool *exists);
bd_result pg_breach_refresh_count(bd_store *s, const char *uuid, int64_t counted);
bd_result pg_breach_records(bd_store *s, const char *uuid, int64_t *n, int64_t *min_id);
bd_result pg_breach_records_past(bd_store *s, const char (*uuids)[BD_UUID_LEN + 1], size_t count,
                                 int64_t after, int64_t *n);
bd_result pg_records_last_id(bd_store *s, int64_t *id);
bd_result pg_breach_by_name(bd_store *s, bd_slice name, bd_breach_cb cb, void *ctx);
bd_result pg_breaches_of_email(bd_store *s, bd_slice email, bd_breach_cb cb, void *ctx);
bd_result pg_domain_breaches(bd_store *s, bd_slice domain, int64_t max_records, bd_domain_cb cb,
                             void *ctx, int64_t *records);
/* Runs what a migration's SQL asked for in meta and SQL cannot do (the Names of breaches
 * stored before they had one; the end of the CVV migration when no CVV is in clear),
 * inside the migration's transaction. */
bd_result pg_migration_notes(pg_store *p);
/* Empties the breach cache of record puts (records.c); empties it when another writer
 * committed since this connection's last write (conn.c, once per write transaction). */
void pg_breach_cache_forget(pg_store *p);
bd_result pg_breach_cache_check(pg_store *p);
/* The row id and date of a breach; BD_ERR_NOT_FOUND when absent. */
bd_result pg_breach_id(pg_store *p, const char *uuid, int64_t *id, int32_t *date);

bd_result pg_record_put(bd_store *s, const bd_record_in *r, bool *inserted);
bd_result pg_record_search(bd_store *s, bd_record_query *q, bd_record_cb cb, void *ctx,
                           int64_t *found);

bd_result pg_card_put(bd_store *s, const bd_card_in *c, bool *inserted);
bd_result pg_card_search(bd_store *s, const bd_card_query *q, int64_t *found, bd_card_cb cb,
                         void *ctx);
bd_result pg_cvv_upgrade(bd_store *s, bd_cvv_protect_fn protect, void *ctx, int64_t *changed);
/* The CVV migration's note: taken away, with the index of plain CVVs, when no card holds one
 * (called by pg_migration_notes, in the migration's transaction). */
bd_result pg_cvv_note(pg_store *p);

bd_result pg_key_add(bd_store *s, const bd_key_row *k, int64_t *id);
bd_result pg_key_list(bd_store *s, bd_key_cb cb, void *ctx);
bd_result pg_key_revoke(bd_store *s, int64_t id, int64_t now);
bd_result pg_key_generation(bd_store *s, int64_t *gen);

/* keys.c (the quota) and usage.c (the counters) */
bd_result pg_key_set_quota(bd_store *s, int64_t id, int64_t quota_per_month);
bd_result pg_key_set_job_limits(bd_store *s, int64_t id, int64_t max_jobs,
                                int64_t max_queued_identities, int64_t max_result_rows);
bd_result pg_key_get(bd_store *s, int64_t id, bd_key_row *out);
bd_result pg_usage_add(bd_store *s, int64_t key_id, int32_t day, int64_t count, int64_t quota,
                       int64_t *added, int64_t *month_total);
bd_result pg_usage_give_back(bd_store *base, int64_t key_id, int32_t day, int64_t count);
bd_result pg_usage_get(bd_store *s, int64_t key_id, int32_t day, int64_t *day_total,
                       int64_t *month_total);

bd_result pg_rate_take(bd_store *s, int kind, int64_t id, int64_t now_us, int64_t share_us,
                       int64_t depth_us, int64_t want, int64_t *granted, int64_t *tat_us);
bd_result pg_rate_give_back(bd_store *s, int kind, int64_t id, int64_t count, int64_t share_us);

bd_result pg_erase_email(bd_store *s, const char *email, bd_stats_cb cb, void *ctx,
                         int64_t *removed);
bd_result pg_erase_breach(bd_store *s, const char *uuid, int64_t *records_removed);
bd_result pg_truncate_log(bd_store *s, int64_t wait_ms);
bd_result pg_backup(bd_store *s, const char *dest, int dest_fd);
bd_result pg_range_get(bd_store *s, bd_range_mode mode, uint32_t prefix, bd_range_cb cb, void *ctx);
bd_result pg_range_load(bd_store *s, bd_range_mode mode, const uint8_t *hash, uint32_t count);
bd_result pg_range_export(bd_store *s, uint64_t *version, bd_range_bucket_cb cb, void *ctx);
/* Merges the hashes the open transaction wrote into their buckets (before its commit; after
 * the streamed records moved). */
bd_result pg_range_flush(pg_store *p);
/* Adds the password hashes of the records a move put in (binary result: sha1, ntlm;
 * copy_format.c). */
bd_result pg_range_add_moved(pg_store *p, const PGresult *res);

bd_result pg_stats(bd_store *s, bd_stats_cb cb, void *ctx, int64_t *total_records,
                   int64_t *total_cards);

/* Drops libpq's notices (e.g. "index does not exist, skipping"), which it would print on
 * stderr and none of which is for the operator (exec.c). */
void pg_silence_notices(PGconn *conn);

/* The meta table's read statement (meta.c), run by the data version and the breach
 * cache check too. */
extern const pg_stmt pg_meta_get_stmt;
/* The data version as the change log holds it (changes.c), which the lookup dispatcher reads
 * too for the replies kept per version. */
#define PG_CHANGE_VERSION_SQL "SELECT coalesce(max(seq), 0) FROM changes"

/* The operations table of ops.c, and the members conn.c, txn.c, views.c and meta.c
 * implement. */
extern const bd_store_ops bd_pg_ops;
/* Opens a connection whose base carries ops (the store front's bd_pg_open passes its
 * table); the failure's reason in why. */
bd_result pg_connect(const char *uri, int flags, const bd_store_ops *ops, bd_store **out, char *why,
                     size_t whylen);
void pg_close(bd_store *s);
bd_result pg_meta_get(bd_store *s, const char *key, char *out, size_t outcap);
bd_result pg_meta_set(bd_store *s, const char *key, const char *value);
bd_result pg_read_begin(bd_store *s);
void pg_read_end(bd_store *s);
void pg_share_reads(bd_store *s, int64_t window_us);
uint64_t pg_data_version(bd_store *s);
void pg_release_idle(bd_store *s);
bd_result pg_ping(bd_store *s);

/* tenants.c: tenants, their domains, key changes; audit.c: the audit trail and the lookup log */
bd_result pg_key_change(bd_store *s, int64_t id, const bd_key_change *c);
bd_result pg_tenant_add(bd_store *s, bd_slice name, int64_t now, int64_t *id);
bd_result pg_tenant_list(bd_store *s, bd_tenant_cb cb, void *ctx);
bd_result pg_tenant_get(bd_store *s, int64_t id, bd_tenant_row *out);
bd_result pg_tenant_rename(bd_store *s, int64_t id, bd_slice name);
bd_result pg_tenant_remove(bd_store *s, int64_t id);
bd_result pg_tenant_domain_add(bd_store *s, int64_t id, bd_slice domain);
bd_result pg_tenant_domain_remove(bd_store *s, int64_t id, bd_slice domain);
bd_result pg_tenant_domains(bd_store *s, int64_t id, bd_tenant_domain_cb cb, void *ctx);
bd_result pg_audit_add(bd_store *s, const bd_audit_row *r, int64_t *id);
bd_result pg_audit_list(bd_store *s, int64_t before, int limit, bd_audit_cb cb, void *ctx);
bd_result pg_lookup_add(bd_store *s, const bd_lookup_row *rows, size_t n);
bd_result pg_lookup_find(bd_store *s, const uint8_t hash[32], int limit, bd_lookup_cb cb,
                         void *ctx);
bd_result pg_lookup_expire(bd_store *s, int64_t before_at, int64_t *deleted);

#endif
