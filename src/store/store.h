/* The one interface to storage. Everything that touches SQL lives behind it, so a second
 * backend (PostgreSQL) implements this header and nothing else changes.
 *
 * Ownership: a bd_store is one connection, used by one thread at a time; a server opens one
 * per worker thread. Rows handed to callbacks (bd_breach_row, bd_record_row, bd_card_row) point
 * into the backend's statement and are valid only during the callback: copy what must outlive
 * it. Input structs are read during the call only. A slice with ptr == NULL is SQL NULL.
 *
 * Values reach the store already normalised and masked: the store never sees a plaintext
 * password, SSN or card number, only masked text and keyed hashes (32-byte HMAC-SHA-256). */
#ifndef BD_STORE_STORE_H
#define BD_STORE_STORE_H

#include <stdbool.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/result.h"
#include "core/slice.h"

typedef struct bd_store bd_store;

#define BD_HMAC_LEN 32
#define BD_UUID_LEN 36 /* canonical lower-case text form, NUL excluded */

enum {
    BD_STORE_READ = 0,   /* serving: reads only */
    BD_STORE_WRITE = 1,  /* breachctl: imports, keys */
    BD_STORE_CREATE = 2, /* create the schema if the store is empty (with WRITE) */
    /* with WRITE: a server's small writes (usage counters) beside its readers. The store
     * must exist; nothing about its files is changed on open (on SQLite, opening and closing
     * the file to fix its mode would drop every POSIX lock this process's other connections
     * hold on it), and no settings for bulk loads are taken. */
    BD_STORE_SMALL_WRITES = 4,
};

/* The secret file a store uses when none is named: "<path>.secret" beside a SQLite store.
 * false when the store has no default (a database server: the secret must never live in
 * it or be guessed from its address, so --secret is required). */
bool bd_store_default_secret_path(const char *uri, char *out, size_t cap);

/* What a kind of store offers beyond the operations every store has. Each backend states
 * its own (store_impl.h); callers ask here instead of guessing from a path or from which
 * call answers BD_ERR_INVALID. */
typedef struct {
    /* A database server that several machines reach (PostgreSQL), not a file of one
     * machine: no secret file lives beside it (--secret is required), its hot standby may
     * not have replayed the store's creation yet, and bd_store_open cannot tell "absent"
     * from the name alone. */
    bool database_server;
    /* bd_store_backup writes a consistent copy while the store serves; without it the
     * backend's own tool makes copies (PostgreSQL: pg_dump) and bd_store_backup refuses
     * with BD_ERR_INVALID. */
    bool online_backup;
    /* bd_store_rate_take/give_back keep rate-limit buckets that several servers share
     * (breachd --shared-limits); without it both answer BD_ERR_INVALID. */
    bool shared_rate_counters;
    /* Erased rows keep copies in a write-ahead log file beside the store until
     * bd_store_truncate_log empties it; without it bd_store_truncate_log does nothing
     * (the server recycles its own log). */
    bool write_ahead_log_file;
    /* With write_ahead_log_file: that file's name is the store's path and this suffix. */
    const char *log_file_suffix;
    /* bd_store_distribute lays the tables out over a cluster's nodes when the database is
     * a cluster's coordinator (PostgreSQL with Citus); without it, it answers
     * BD_ERR_INVALID. */
    bool cluster_layout;
} bd_store_caps;

/* The capabilities of the kind of store uri names (bd_store_open's forms), known without
 * opening it. */
void bd_store_kind_caps(const char *uri, bd_store_caps *out);
/* The capabilities of an open store: those of its kind. */
void bd_store_capabilities(const bd_store *s, bd_store_caps *out);

/* Opens a connection to the store named by uri: a SQLite file path, or a postgres:// or
 * postgresql:// libpq connection URI or a libpq keyword/value string ("host=... dbname=...",
 * store/uri.h: bd_uri_is_postgres) naming a PostgreSQL database. On failure, *out is NULL
 * and why holds a sentence for the operator, never a password from the URI.
 * BD_ERR_NOT_FOUND when the store does not exist and CREATE was not asked; BD_ERR_BUSY when
 * it cannot be reached. */
bd_result bd_store_open(const char *uri, int flags, bd_store **out, char *why, size_t whylen);
void bd_store_close(bd_store *s);

/* Store-wide settings kept in the schema. The secret fingerprint lets the server refuse a
 * secret file that belongs to another store. */
bd_result bd_store_meta_get(bd_store *s, const char *key, char *out, size_t outcap);
bd_result bd_store_meta_set(bd_store *s, const char *key, const char *value);

/* Transactions for batched writes: every write between begin and commit lands or none does. */
bd_result bd_store_begin(bd_store *s);
bd_result bd_store_commit(bd_store *s);
void bd_store_rollback(bd_store *s);

/* The reads of one request. Each search (its page and its count) is one consistent read
 * whatever commits meanwhile; SQLite also keeps one snapshot from read_begin to read_end,
 * PostgreSQL answers each operation from its own (a later one, e.g. a breach looked up for
 * a record just found, may see a newer commit). Every read_begin needs a read_end. */
bd_result bd_store_read_begin(bd_store *s);
void bd_store_read_end(bd_store *s);

/* Optional hint (a backend without long-lived read views ignores it): lets the reads of
 * one store that begin within window_us of each other share one read view, so a busy reader pays
 * for starting a view once per window instead of once per request: a read then sees every commit
 * made more than window_us before it began (and may see later ones). 0, the default, gives every
 * read_begin a fresh view. Call it before the first read; then every use of the store must sit
 * between read_begin and read_end. */
void bd_store_share_reads(bd_store *s, int64_t window_us);
/* A number that changes whenever the store's content does, from any process: two reads
 * through the same handle that get the same number saw the same data, so whatever was
 * derived from the first still holds for the second. Meaningful inside a read view once it
 * has run a query; compare only values from one handle. */
uint64_t bd_store_data_version(bd_store *s);
/* Optional hint, paired with bd_store_share_reads (a no-op where that is ignored): ends a
 * shared read view that has outlived its window, unless a read is in progress, so an idle
 * reader does not hold back the checkpoints of another process's writes. Safe to call from
 * any thread. */
void bd_store_release_idle(bd_store *s);

/* Bulk loading. Inside an open write transaction, bulk_begin drops the lookup indexes of
 * records or cards (and stops maintaining the card word index and counts), so rows go in
 * without random index writes; bulk_end rebuilds all of it by sorting once. Run both in
 * the same transaction: readers keep the previous, fully indexed snapshot until the commit,
 * and a crash before it rolls everything back. */
typedef enum {
    BD_BULK_RECORDS,
    BD_BULK_CARDS,
    BD_BULK_RANGES, /* password ranges: for bd_store_loaded only (bulk_begin/end refuse it) */
} bd_bulk_kind;
bd_result bd_store_bulk_begin(bd_store *s, bd_bulk_kind kind);
bd_result bd_store_bulk_end(bd_store *s, bd_bulk_kind kind);
/* Optional hint, outside a transaction, after an import (plain or bulk) committed rows of
 * kind: a backend whose maintenance runs later may run what searches need of it now.
 * PostgreSQL vacuums and analyzes kind's tables when the rows are a tenth of a table or
 * more (statistics for its planner, and the visibility map without which a count reads
 * every row instead of the index alone); SQLite, which needs neither, does nothing. */
void bd_store_loaded(bd_store *s, bd_bulk_kind kind, int64_t rows);

/* Cheap liveness check for /healthz. */
bd_result bd_store_ping(bd_store *s);

/* ---- breaches ---------------------------------------------------------------------- */

/* A breach's flags in the Have I Been Pwned API v3 model. Every flag is off by default, so
 * a breach is verified unless BD_BREACH_UNVERIFIED is set. */
enum {
    BD_BREACH_UNVERIFIED = 1 << 0,
    BD_BREACH_FABRICATED = 1 << 1,
    BD_BREACH_SENSITIVE = 1 << 2,
    BD_BREACH_RETIRED = 1 << 3,
    BD_BREACH_SPAM_LIST = 1 << 4,
    BD_BREACH_MALWARE = 1 << 5,
    BD_BREACH_STEALER_LOG = 1 << 6,
    BD_BREACH_SUBSCRIPTION_FREE = 1 << 7,
};

typedef struct {
    char uuid[BD_UUID_LEN + 1];
    bd_slice source_name, site_domain, breach_type, site_categories, site_country, site_language,
        password_types, leaked_data_types, description, service_article_url, site_logo;
    int32_t date_leaked; /* yyyymmdd */
    int64_t pwned_count; /* -1: count the distinct identities imported for the breach */
    /* The HIBP Name wanted (ASCII letters and digits, store/breach_name.h); NULL: derived
     * from source_name. Either way a Name another breach holds gets a numeric suffix. */
    bd_slice name;
    int64_t added_at;    /* Unix seconds; 0: the time of the put */
    int64_t modified_at; /* Unix seconds; 0: added_at */
    uint32_t flags;      /* BD_BREACH_* */
} bd_breach_in;

typedef struct {
    bd_slice uuid;
    bd_slice source_name, site_domain, breach_type, site_categories, site_country, site_language,
        password_types, leaked_data_types, description, service_article_url, site_logo;
    int32_t date_leaked; /* yyyymmdd */
    int64_t pwned_count;
    bd_slice name;                 /* unique, never NULL */
    int64_t added_at, modified_at; /* Unix seconds */
    uint32_t flags;                /* BD_BREACH_* */
} bd_breach_row;

/* Returns non-zero to stop the iteration early. */
typedef int (*bd_breach_cb)(void *ctx, const bd_breach_row *row);

/* Inserts a breach; *inserted is false when a breach with that uuid already exists (it is
 * left as it was: its Name, dates and flags too). The breach gets its Name here, once
 * (bd_breach_in.name); BD_ERR_EXISTS when a thousand breaches already hold its base Name
 * and its numbered variants. */
bd_result bd_store_breach_put(bd_store *s, const bd_breach_in *b, bool *inserted);
/* Breaches newest first (date_leaked descending, then source_name); limit <= 0: all. */
bd_result bd_store_breach_list(bd_store *s, int limit, bd_breach_cb cb, void *ctx);
/* One breach by the breach_id of a record row; BD_ERR_NOT_FOUND when absent. */
bd_result bd_store_breach_by_id(bd_store *s, int64_t id, bd_breach_cb cb, void *ctx);
/* One breach by canonical lower-case uuid; BD_ERR_NOT_FOUND when absent. */
bd_result bd_store_breach_get(bd_store *s, const char *uuid, bd_breach_cb cb, void *ctx);
/* Whether a breach exists. */
bd_result bd_store_breach_exists(bd_store *s, const char *uuid, bool *exists);
/* Recomputes the derived identity count of the given breach. */
bd_result bd_store_breach_refresh_count(bd_store *s, const char *uuid);

/* What one import wrote into one breach. */
typedef struct {
    int64_t inserted;       /* records it inserted into the breach */
    int64_t identities;     /* distinct identities among them (breach.pwned_count's rule); -1:
                             * not counted */
    int64_t last_id_before; /* bd_store_records_last_id when the import began */
} bd_breach_tally;

/* Sets a breach's derived identity count after an import: to the import's own count when
 * every record of the breach is one it inserted (none at or below last_id_before, and as
 * many as it inserted), so the records are not read again; else as
 * bd_store_breach_refresh_count. */
bd_result bd_store_breach_settle_count(bd_store *s, const char *uuid, const bd_breach_tally *t);
/* The same for n breaches (uuids[i] with t[i]), their records counted at once where the
 * store can. */
bd_result bd_store_breach_settle_counts(bd_store *s, const char (*uuids)[BD_UUID_LEN + 1],
                                        const bd_breach_tally *t, size_t n);
/* The greatest record id so far; 0 when there is none. */
bd_result bd_store_records_last_id(bd_store *s, int64_t *id);

/* ---- the Have I Been Pwned API v3's reads ---------------------------------------------- */

/* One breach by Name, ASCII case ignored; BD_ERR_NOT_FOUND when absent. */
bd_result bd_store_breach_by_name(bd_store *s, bd_slice name, bd_breach_cb cb, void *ctx);
/* Each breach holding a record whose (normalised) email is email, once, in Name order. The
 * email's records are read through its index: the work grows with them, not the store. */
bd_result bd_store_breaches_of_email(bd_store *s, bd_slice email, bd_breach_cb cb, void *ctx);

typedef struct {
    bd_slice email;       /* normalised: the alias is the part before its last '@' */
    bd_slice breach_name; /* the breach's Name */
} bd_domain_row;

typedef int (*bd_domain_cb)(void *ctx, const bd_domain_row *row);

/* Each (email, breach Name) pair of the records of one email domain (normalised), once, in
 * email then Name order. Bounded: *records gets the domain's record count (kept at import,
 * one lookup) first, and when it is more than max_records the call returns BD_ERR_LIMIT
 * without reading a record. One read: the count and the pairs are consistent. */
bd_result bd_store_domain_breaches(bd_store *s, bd_slice domain, int64_t max_records,
                                   bd_domain_cb cb, void *ctx, int64_t *records);

/* ---- breach records ---------------------------------------------------------------- */

/* The searchable kinds of identity data, in the interface's filter order. */
typedef enum {
    BD_FIELD_EMAIL,
    BD_FIELD_EMAIL_DOMAIN,
    BD_FIELD_PHONE,
    BD_FIELD_USERNAME,
    BD_FIELD_IP,
    BD_FIELD_SSN,
    BD_FIELD_PASSWORD,
    BD_FIELD_PASSWORD_HASH,
    BD_FIELD_BITCOIN,
    BD_FIELD_WEBSITE_DOMAIN, /* the host of the website of a stealer log's line */
    BD_FIELD_COUNT
} bd_field;

typedef enum { BD_SEVERITY_LOW = 1, BD_SEVERITY_MEDIUM = 2, BD_SEVERITY_HIGH = 3 } bd_severity;

typedef struct {
    char breach_uuid[BD_UUID_LEN + 1];
    /* display values, normalised where the interface compares normalised values */
    bd_slice user_name, first_name, last_name, email, email_domain, phone_number, ip_address,
        bitcoin_address, password_masked, password_hash, ssn_masked, other_attributes;
    /* the website's host (normalised; also shown in other_attributes as "site") */
    bd_slice website_domain;
    /* lookup keys: normalised text, or HMAC bytes for password and SSN */
    bd_slice user_name_key, phone_key, password_hmac, ssn_hmac;
    bd_severity severity;
    uint8_t dedup[16]; /* identifies the record's content: a second import is a duplicate */
    /* The plaintext password's unsalted hashes, for the Pwned Passwords ranges: when
     * has_ranges, a record that goes in adds 1 to each hash's count, in the record's
     * transaction; a duplicate adds nothing. The store keeps them apart from the record,
     * with no link to it (see "password ranges" below). */
    bool has_ranges;
    uint8_t password_sha1[20], password_ntlm[16];
} bd_record_in;

typedef struct {
    int64_t id;
    bd_slice user_name, first_name, last_name, email, email_domain, phone_number, ip_address,
        bitcoin_address, password_masked, password_hash, ssn_masked, other_attributes;
    bd_severity severity;
    int64_t breach_id;   /* the record's breach, for bd_store_breach_by_id */
    int32_t breach_date; /* yyyymmdd, the sort key */
} bd_record_row;

typedef int (*bd_record_cb)(void *ctx, const bd_record_row *row);

/* Inserts a record of an existing breach; *inserted false for a duplicate. BD_ERR_NOT_FOUND
 * when the breach does not exist. Inside a transaction a backend may decide duplicates only
 * when the rows land (PostgreSQL streams them with COPY): then *inserted is true for a row
 * it accepted, and bd_store_take_late_duplicates says how many of those were duplicates. */
bd_result bd_store_record_put(bd_store *s, const bd_record_in *r, bool *inserted);
/* Says that r will be put soon (an importer names the record a few rows ahead of the one it
 * puts): the backend may start fetching what that put will read. Changes nothing; a no-op
 * for a backend with nothing to fetch. */
void bd_store_record_hint(bd_store *s, const bd_record_in *r);
/* How many records or cards that record_put or card_put accepted (*inserted true) in
 * transactions committed since the last call turned out, at commit, to be duplicates (of
 * stored rows, or of each other within the batch); resets the count. 0 for a backend that decides duplicates
 * at put time (SQLite). An importer moves these from its imported count to its duplicates
 * after each commit. */
int64_t bd_store_take_late_duplicates(bd_store *s);

typedef enum {
    BD_FILTER_NONE = 0,
    BD_FILTER_PRESENT, /* the record has a value for the field */
    BD_FILTER_ABSENT,  /* the record has no value for the field */
    BD_FILTER_EQUALS,  /* the record's lookup key equals value */
} bd_filter_mode;

typedef struct {
    bd_field field; /* searched field */
    bd_slice key;   /* its lookup key: normalised text or HMAC bytes */
    struct {
        bd_filter_mode mode;
        bd_slice key;
    } filter[BD_FIELD_COUNT];
    int limit; /* records per page */
    /* The backend's memo of its plan for this query: zero when the query is built; the
     * first count or find may note here how it chose to run the query, and the other
     * reuses it (same read view). Callers never read it. */
    int plan;
    /* keyset position: only records after (date, id) in the order, when has_after */
    bool has_after;
    int32_t after_date;
    int64_t after_id;
    /* 0: none; else only records whose email_domain is one of the tenant's domains or under
     * one (a tenant key's search): the page and the count alike, and the whole-domain count
     * shortcut is not taken. */
    int64_t scope_tenant;
} bd_record_query;

/* Whether q is an email_domain search without filters or scope: every record of one
 * domain, which both backends count from the per-domain counts kept at import. */
bool bd_record_query_whole_domain(const bd_record_query *q);
/* One search: calls cb for up to q->limit records in order (breach date newest first, then
 * id descending), starting after the keyset position, and when found is not NULL (a first
 * page: BD_ERR_INVALID with a position) counts every record matching q into *found. The
 * page and the count are one read: consistent with each other whatever commits meanwhile.
 * How the search runs (which index drives it, whether counting needs a query of its own)
 * is the backend's choice, noted in q->plan. */
bd_result bd_store_record_search(bd_store *s, bd_record_query *q, bd_record_cb cb, void *ctx,
                                 int64_t *found);

/* Bulk lookups (jobs): for each keys[i] of field, in order, calls cb with i and the id of
 * each of the key's first `limit` records in search order (breach date newest first, then id
 * descending: bd_store_record_search's without filters). The backend reads many keys per
 * statement or reuses one prepared statement for all. One read: call inside a read view.
 * scope_tenant as bd_record_query's (0: none): only records in that tenant's domains. */
typedef int (*bd_record_id_cb)(void *ctx, size_t key, int64_t id);
bd_result bd_store_record_ids(bd_store *s, bd_field field, const bd_slice *keys, size_t n,
                              int limit, bd_record_id_cb cb, void *ctx, int64_t scope_tenant);
/* Calls cb for the record of each of ids[0..n) that exists (ids ascending, distinct), in any
 * order. One read: call inside a read view. */
bd_result bd_store_records_by_id(bd_store *s, const int64_t *ids, size_t n, bd_record_cb cb,
                                 void *ctx);

/* ---- cards ------------------------------------------------------------------------- */

typedef struct {
    char id[BD_UUID_LEN + 1];
    char created_at[20]; /* YYYY-MM-DD HH:MM:SS */
    char number_masked[20];
    char bin[7], last4[5];
    int length;
    uint8_t number_hmac[BD_HMAC_LEN]; /* keyed hash of the SHA-256 digest of the digits */
    char cvv_masked[5];               /* one '*' per digit; "" when the card has no CVV */
    uint8_t cvv_hmac[BD_HMAC_LEN];    /* keyed hash of the CVV's digits, when it has one */
    bd_slice bank, owner, leak_id, leak_name, leak_tags;
    char expire_date[11], leak_publish_date[11], leak_discover_date[11]; /* "" when absent */
    bool has_cvss;
    double cvss;
    int64_t leak_size; /* -1 when absent */
} bd_card_in;

/* cvv is the stored mask ("***"). A store upgraded from before CVVs were masked may hold
 * some in clear until bd_store_cvv_upgrade has run: what a reply shows goes through
 * bd_mask_cvv_shown (ingest/mask.h) either way. */
typedef struct {
    bd_slice id, created_at, bank, number_masked, owner, cvv, expire_date, leak_id, leak_name,
        leak_publish_date, leak_discover_date, leak_tags;
    bool has_cvss, has_leak_size;
    double cvss;
    int64_t leak_size;
} bd_card_row;

typedef int (*bd_card_cb)(void *ctx, const bd_card_row *row);

/* Inserts a card; *inserted false when a card with that id exists. Inside a transaction a
 * backend may decide that only when the cards land, as for records: see
 * bd_store_take_late_duplicates, which counts cards too. */
bd_result bd_store_card_put(bd_store *s, const bd_card_in *c, bool *inserted);

/* A card search is a tree of conditions, built by the query planner (src/query/plan.c) and
 * turned into bound-parameter SQL here: no text from a request is ever part of SQL. */
typedef enum {
    BD_CC_ALL,    /* every card */
    BD_CC_AND,    /* all kids */
    BD_CC_OR,     /* any kid */
    BD_CC_NOT,    /* not kids[0]; a card the kid says nothing about (NULL) is included */
    BD_CC_NUMBER, /* masked-number pattern: bin and tail patterns, length */
    BD_CC_HMAC,   /* exact card by keyed hash */
    BD_CC_CVV,    /* CVV by keyed hash (hmac) */
    BD_CC_EQUALS, /* column equals value (leak id) */
    BD_CC_WORDS,  /* word, phrase or word-prefix match in owner or bank */
    BD_CC_RANGE,  /* created_at or expire_date within bounds */
} bd_card_cond_kind;

typedef enum {
    BD_CARD_CREATED_AT,
    BD_CARD_EXPIRE_DATE,
    BD_CARD_BANK,
    BD_CARD_OWNER,
    BD_CARD_CVSS,
    BD_CARD_LEAK_NAME,
    BD_CARD_LEAK_PUBLISH_DATE,
    BD_CARD_LEAK_DISCOVER_DATE,
    BD_CARD_LEAK_SIZE,
    BD_CARD_LEAK_ID,
} bd_card_column;

typedef struct bd_card_cond {
    bd_card_cond_kind kind;
    const struct bd_card_cond *const *kids; /* AND, OR: nkids >= 1; NOT: 1 */
    size_t nkids;
    /* NUMBER: bin is up to 6 leading digits with '?' for any digit ("" = any); last4 up to
     * 4 trailing digits in reading order, anchored at the last digit ("11" = ends with 11),
     * '?' for any digit; length 12..19 or 0 = any; min_length: the card has at least this
     * many digits (0 = no bound) */
    char bin[7], last4[5];
    int length, min_length;
    uint8_t hmac[BD_HMAC_LEN]; /* HMAC, CVV */
    bd_card_column column;     /* EQUALS, WORDS (owner/bank), RANGE (dates) */
    bd_slice value;            /* EQUALS */
    const bd_slice *words;     /* WORDS: lower-case; several form a phrase */
    size_t nwords;
    bool prefix;        /* WORDS: the last word is a prefix */
    bd_slice low, high; /* RANGE: NULL ptr = open end; text as stored */
    bool low_inclusive, high_inclusive;
} bd_card_cond;

typedef struct {
    bd_card_column column;
    bool descending;
} bd_card_sort;

#define BD_CARD_MAX_SORT 9

typedef struct {
    const bd_card_cond *where;
    bd_card_sort sort[BD_CARD_MAX_SORT]; /* ties are broken by card id, in the direction of
                                            the first key */
    size_t nsort;
    int64_t offset;
    int limit;
} bd_card_query;

/* One search: counts the cards matching q->where into *found, then calls cb for the page of
 * q (sort, offset, limit); *found is set before the first call. The count and the page are
 * one read: consistent with each other whatever commits meanwhile. */
bd_result bd_store_card_search(bd_store *s, const bd_card_query *q, int64_t *found,
                               bd_card_cb cb, void *ctx);

/* Cards imported before CVVs were masked kept them in clear. The schema migration that
 * masks them cannot hash them (the server secret is never in the store): it leaves the
 * work, and this does it, called by whoever opens the store with the secret (breachctl's
 * commands, breachd at start). protect gives each CVV's mask and keyed hash (ingest/cvv.h);
 * every plain CVV is replaced by them in one transaction, overwriting the plain values
 * where the backend can (SQLite: secure_delete; the caller then empties the log with
 * bd_store_truncate_log). *changed: the cards changed; 0, with nothing written, when no
 * such work waits (the common case: one meta read). A writer, outside a transaction. */
typedef void (*bd_cvv_protect_fn)(void *ctx, bd_slice cvv, char masked[5],
                                  uint8_t hmac[BD_HMAC_LEN]);
bd_result bd_store_cvv_upgrade(bd_store *s, bd_cvv_protect_fn protect, void *ctx, int64_t *changed);

/* ---- API keys ---------------------------------------------------------------------- */

typedef struct {
    int64_t id;
    bd_slice name, plan;
    uint8_t hash[32]; /* SHA-256 of the key text */
    int64_t rate_per_hour;
    int64_t exact_per_day; /* card lookups by full number or Hash: per day; 0: none */
    int64_t created_at;    /* Unix seconds */
    int64_t expires_at;    /* 0: never */
    int64_t revoked_at;    /* 0: active */
    int64_t quota_per_month; /* requests per calendar month (UTC); 0: no quota */
    /* bulk jobs (store.h "bulk lookup jobs"), each 0 for the default (auth/keys.h): jobs
     * queued or running at once, identities of those not yet looked up, result rows kept in
     * the key's jobs */
    int64_t max_jobs, max_queued_identities, max_result_rows;
    int64_t tenant_id;  /* 0: none (the operator's key) */
    uint32_t types;     /* stored mask; 0: the default (auth/keys.h bd_key_types_resolve) */
    bd_slice allow_ip;  /* comma-separated CIDRs, canonical text; empty: anywhere */
    int role;           /* BD_KEY_ROLE_USER, BD_KEY_ROLE_ADMIN (an admin key has no tenant) */
} bd_key_row;

enum { BD_KEY_ROLE_USER = 0, BD_KEY_ROLE_ADMIN = 1 };

typedef int (*bd_key_cb)(void *ctx, const bd_key_row *row);

/* Stores a new key; *id receives its number. Bumps the key generation. BD_ERR_NOT_FOUND when
 * k->tenant_id (not 0) names no tenant; BD_ERR_INVALID for an admin key with a tenant. */
bd_result bd_store_key_add(bd_store *s, const bd_key_row *k, int64_t *id);
/* Every key, revoked ones included, by id. */
bd_result bd_store_key_list(bd_store *s, bd_key_cb cb, void *ctx);
/* Marks a key revoked; BD_ERR_NOT_FOUND when there is no such key. Bumps the generation. */
bd_result bd_store_key_revoke(bd_store *s, int64_t id, int64_t now);
/* A number that changes whenever keys change, so servers can reload cheaply. */
bd_result bd_store_key_generation(bd_store *s, int64_t *gen);
/* Sets an active key's monthly quota (0: none); BD_ERR_NOT_FOUND when there is no active key
 * id. Bumps the generation. */
bd_result bd_store_key_set_quota(bd_store *s, int64_t id, int64_t quota_per_month);
/* Sets an active key's job limits (bd_key_row's; 0: the default, below 0: left as it is);
 * BD_ERR_NOT_FOUND when there is no active key id. Bumps the generation. */
bd_result bd_store_key_set_job_limits(bd_store *s, int64_t id, int64_t max_jobs,
                                      int64_t max_queued_identities, int64_t max_result_rows);
/* Key id, revoked or not, into *out with its name, plan and allow_ip left empty (the numbers
 * a background task needs); BD_ERR_NOT_FOUND when there is none. */
bd_result bd_store_key_get(bd_store *s, int64_t id, bd_key_row *out);

/* Changes an active key's scope and limits (admin API PATCH): each field whose set flag is
 * true (name, plan, rate, quota, types, allow_ip, expires_at). BD_ERR_NOT_FOUND when there is
 * no active key id. Bumps the generation. */
typedef struct {
    bool set_plan, set_rate, set_quota, set_types, set_allow_ip, set_expires, set_name;
    bd_slice plan, name;
    int64_t rate_per_hour, quota_per_month, expires_at;
    uint32_t types;
    bd_slice allow_ip;
} bd_key_change;
bd_result bd_store_key_change(bd_store *s, int64_t id, const bd_key_change *c);

/* ---- tenants ----------------------------------------------------------------------- */

/* A tenant: a customer of the deployment whose keys see only records of its domains. A
 * domain (normalised as an email_domain search: lower case, no trailing dot) belongs to at
 * most one tenant, and no tenant's domain is a subdomain or parent of another tenant's, so
 * scopes never overlap. Every tenant or domain change bumps the key generation (keyrings
 * hold the domains). Rows handed to callbacks are valid during the callback only. */
typedef struct {
    int64_t id;
    bd_slice name;
    int64_t created_at; /* Unix seconds */
} bd_tenant_row;
typedef int (*bd_tenant_cb)(void *ctx, const bd_tenant_row *t);
typedef int (*bd_tenant_domain_cb)(void *ctx, int64_t tenant_id, bd_slice domain);

/* BD_ERR_CONFLICT: the name is taken. */
bd_result bd_store_tenant_add(bd_store *s, bd_slice name, int64_t now, int64_t *id);
/* Every tenant, by id. */
bd_result bd_store_tenant_list(bd_store *s, bd_tenant_cb cb, void *ctx);
/* One tenant; its name points into a store buffer valid until the next call on s.
 * BD_ERR_NOT_FOUND. */
bd_result bd_store_tenant_get(bd_store *s, int64_t id, bd_tenant_row *out);
/* BD_ERR_NOT_FOUND; BD_ERR_CONFLICT: the name is another tenant's. */
bd_result bd_store_tenant_rename(bd_store *s, int64_t id, bd_slice name);
/* Removes a tenant and its domains. BD_ERR_NOT_FOUND; BD_ERR_CONFLICT while an active
 * (unrevoked) key belongs to it. */
bd_result bd_store_tenant_remove(bd_store *s, int64_t id);
/* BD_ERR_NOT_FOUND: no such tenant; BD_ERR_CONFLICT: the domain is another tenant's, or a
 * subdomain or parent of one; adding a domain the tenant already has: BD_OK. */
bd_result bd_store_tenant_domain_add(bd_store *s, int64_t id, bd_slice domain);
/* BD_ERR_NOT_FOUND when the tenant does not have the domain. */
bd_result bd_store_tenant_domain_remove(bd_store *s, int64_t id, bd_slice domain);
/* The domains of tenant id, sorted; id 0: every tenant's, by tenant then domain. */
bd_result bd_store_tenant_domains(bd_store *s, int64_t id, bd_tenant_domain_cb cb, void *ctx);

/* ---- audit trail ------------------------------------------------------------------- */

/* Who changed what (admin API and breachctl): before/after are JSON text (NULL ptr: none),
 * never a secret. key_id 0 and address "breachctl" for a change made with breachctl. */
typedef struct {
    int64_t id, at, key_id;
    bd_slice address, action, target, before, after;
} bd_audit_row;
typedef int (*bd_audit_cb)(void *ctx, const bd_audit_row *r);
/* Appends r (its id ignored); *id (may be NULL) gets the new row's id. */
bd_result bd_store_audit_add(bd_store *s, const bd_audit_row *r, int64_t *id);
/* Rows with id < before (before 0: from the newest), newest first, at most limit. */
bd_result bd_store_audit_list(bd_store *s, int64_t before, int limit, bd_audit_cb cb, void *ctx);

/* ---- lookup log -------------------------------------------------------------------- */

/* Each identity search as (time, key, type, keyed hash of the normalised identity): which
 * key looked someone up, without a list of searched identities in clear. */
typedef struct {
    int64_t at, key_id;
    int type;
    uint8_t hash[32];
} bd_lookup_row;
typedef int (*bd_lookup_cb)(void *ctx, const bd_lookup_row *r);
/* Inserts n rows in one transaction of its own. They are no data a search reads: on
 * PostgreSQL the data version stays where it was (SQLite's moves with any commit). */
bd_result bd_store_lookup_add(bd_store *s, const bd_lookup_row *rows, size_t n);
/* The rows whose hash equals hash, newest first, at most limit. */
bd_result bd_store_lookup_find(bd_store *s, const uint8_t hash[32], int limit, bd_lookup_cb cb,
                               void *ctx);
/* Deletes the rows with at < before_at; *deleted gets how many. */
bd_result bd_store_lookup_expire(bd_store *s, int64_t before_at, int64_t *deleted);

/* ---- per-key usage ----------------------------------------------------------------- */

/* Requests each key made per UTC day and per UTC month, kept with the store so they survive
 * restarts and are shared by every server of the store. `day` is yyyymmdd; its month is
 * day / 100 (yyyymm). Both calls are one write transaction of their own (PostgreSQL: one
 * statement, outside any transaction of the connection's; SQLite: BEGIN IMMEDIATE ... COMMIT,
 * so they wait for an import's commit like any writer), neither bumps the data version.
 *
 * usage_add adds `count` (>= 1) requests of key_id on day to the day's and the month's
 * counters, unless quota > 0 and the month's counter would pass quota: then nothing is added.
 * Concurrent calls from any number of connections or processes are serialised by the
 * month's row, so with count 1 exactly `quota` calls of a month add. *added is count or 0;
 * *month_total the month's counter after the call (after a refusal: what it holds). */
bd_result bd_store_usage_add(bd_store *s, int64_t key_id, int32_t day, int64_t count,
                             int64_t quota, int64_t *added, int64_t *month_total);
/* Takes back `count` (>= 1) requests that usage_add added for key_id on day and that were
 * never made (a lease's unused rest): from the day's and the month's counters, never below 0. */
bd_result bd_store_usage_give_back(bd_store *s, int64_t key_id, int32_t day, int64_t count);
/* The counters of key_id for day and its month (0 when nothing was counted). */
bd_result bd_store_usage_get(bd_store *s, int64_t key_id, int32_t day, int64_t *day_total,
                             int64_t *month_total);

/* ---- shared rate limits ------------------------------------------------------------ */

/* Rate-limit buckets that several servers share (breachd --shared-limits): the generic cell
 * rate algorithm of auth/ratelimit.h, its state (one theoretical arrival time per bucket,
 * Unix microseconds) kept in the store. A bucket is (kind, id); its shape is share_us per
 * request and depth_us in all (bd_rate_shape). Only a store whose capabilities say
 * shared_rate_counters keeps them (PostgreSQL); another returns BD_ERR_INVALID. Neither call takes the writer lock or joins an open
 * transaction's fate: each is one statement of its own.
 *
 * rate_take admits up to `want` requests at once, as many as the bucket holds now
 * (*granted, 0 when none), and returns the arrival time after them in *tat_us. */
bd_result bd_store_rate_take(bd_store *s, int kind, int64_t id, int64_t now_us, int64_t share_us,
                             int64_t depth_us, int64_t want, int64_t *granted, int64_t *tat_us);
/* Gives back `count` admitted requests that were never used. A count of 0 changes nothing:
 * a check that the store keeps buckets at all. */
bd_result bd_store_rate_give_back(bd_store *s, int kind, int64_t id, int64_t count,
                                  int64_t share_us);

/* ---- password ranges (Pwned Passwords k-anonymity) -------------------------------- */

/* Unsalted password hashes with a count each, served by their first 5 hex digits the way
 * api.pwnedpasswords.com serves them. Nothing links them to a record or an identity. */
typedef enum { BD_RANGE_SHA1 = 0, BD_RANGE_NTLM = 1 } bd_range_mode;

#define BD_RANGE_PREFIX_MAX 0xFFFFFu /* a prefix is the hash's first 20 bits */

/* One stored hash (20 bytes for SHA-1, 16 for NTLM) and its count (>= 1). Non-zero stops. */
typedef int (*bd_range_cb)(void *ctx, const uint8_t *hash, uint32_t count);

/* Calls cb for every stored hash of mode whose first 20 bits are prefix, in ascending hash
 * order (none: BD_OK without a call). One read: call inside a read view or alone. */
bd_result bd_store_range_get(bd_store *s, bd_range_mode mode, uint32_t prefix, bd_range_cb cb,
                             void *ctx);
/* Inside a write transaction: sets the count of hash to count if that is larger than the
 * count it has (a Pwned Passwords download holds totals: loading it twice changes nothing).
 * Lands at commit with the transaction, or not at all. BD_ERR_INVALID outside a transaction
 * or for count 0. */
bd_result bd_store_range_load(bd_store *s, bd_range_mode mode, const uint8_t *hash,
                              uint32_t count);
/* The ranges' version: a number in the store that every write transaction changing a bucket
 * moves (each commit of range_load, or of records carrying password hashes), the same for
 * every server of the store; 0 for a store whose ranges were never written since it had one.
 * What a cache of the ranges (HTTP ETag, the local snapshot) is keyed on. */
bd_result bd_store_range_version(bd_store *s, uint64_t *version);
/* One stored bucket: its key (mode << 20 | prefix) and its blob as the store keeps it
 * (store/ranges.h). Non-zero stops. */
typedef int (*bd_range_bucket_cb)(void *ctx, uint32_t key, const uint8_t *blob, size_t len);
/* Every bucket in ascending key order and *version, the range version they are at, from one
 * consistent read (store/range_snapshot.h writes them out). Outside a transaction or read
 * view. BD_ERR_INVALID on a store that keeps no such copy (SQLite: its file is local). */
bd_result bd_store_range_export(bd_store *s, uint64_t *version, bd_range_bucket_cb cb,
                                void *ctx);

/* ---- watches and alerts ------------------------------------------------------------ */

/* A watch: an API key's standing search for one identity (a breach-search type, or a card
 * BIN), with where its alerts go. Its type is a bd_field value, or BD_WATCH_BIN. key is the
 * lookup key as the records hold it (normalised text; for password and SSN the lower-case
 * hex of the keyed hash), shown the value as a reply may show it (masked for password and
 * SSN). The signing secret is stored because delivery needs it; no list shows it. */
#define BD_WATCH_BIN BD_FIELD_COUNT
#define BD_WATCH_TYPES (BD_FIELD_COUNT + 1)

/* What an alert is sent as (webhook/payload.h and formats.h build each): the signed JSON
 * alert, a Slack incoming-webhook message, a Microsoft Teams workflow message (an Adaptive
 * Card), a Splunk HTTP Event Collector event (the secret is its token), a mail. */
typedef enum {
    BD_WATCH_FORMAT_JSON = 0,
    BD_WATCH_FORMAT_SLACK = 1,
    BD_WATCH_FORMAT_TEAMS = 2,
    BD_WATCH_FORMAT_SPLUNK_HEC = 3,
    BD_WATCH_FORMAT_EMAIL = 4, /* a mail through breachd's SMTP server; url "mailto:ADDRESS" */
    BD_WATCH_FORMATS
} bd_watch_format;

typedef struct {
    int64_t id, key_id;
    int type; /* bd_field, or BD_WATCH_BIN */
    bd_slice key, shown, url, secret;
    int64_t created_at; /* Unix seconds */
    int format;         /* bd_watch_format */
} bd_watch_row;

typedef int (*bd_watch_cb)(void *ctx, const bd_watch_row *row);

/* Adds a watch of w->key_id (id and created_at of w are ignored; created_at is now) unless
 * the key already holds max_per_key watches: then BD_ERR_LIMIT and nothing changes.
 * BD_ERR_EXISTS when the key watches the same type, key and URL already. Bumps the watch
 * generation. One transaction of its own unless one is open. */
bd_result bd_store_watch_add(bd_store *s, const bd_watch_row *w, int64_t max_per_key,
                             int64_t *id);
/* The watches of key_id (0: of every key), by id. */
bd_result bd_store_watch_list(bd_store *s, int64_t key_id, bd_watch_cb cb, void *ctx);
/* The watches of every key that is neither revoked nor expired at now_s (Unix seconds, > 0;
 * else BD_ERR_INVALID), by id: what an import matches. */
bd_result bd_store_watch_list_live(bd_store *s, int64_t now_s, bd_watch_cb cb, void *ctx);
/* Removes watch id of key_id (0: whoever owns it), and gives up its alerts not yet
 * delivered. BD_ERR_NOT_FOUND when key_id holds no such watch. Bumps the generation. */
bd_result bd_store_watch_remove(bd_store *s, int64_t key_id, int64_t id);
/* A number that changes whenever a watch is added or removed. */
bd_result bd_store_watch_generation(bd_store *s, int64_t *gen);

/* What a committed import found for one watch in one breach (or among cards). */
typedef struct {
    char event_id[BD_UUID_LEN + 1]; /* the receiver's dedup key */
    int64_t watch_id, key_id;
    int watch_type;
    bd_slice watch_shown;
    int64_t breach_id;  /* 0: cards, no breach */
    int64_t matched;    /* records or cards that matched */
    bd_slice identities; /* a JSON array of the matched values as a search shows them */
    int64_t created_at;  /* Unix seconds */
} bd_alert_in;

/* Writes an alert into the outbox inside the open write transaction, so it lands with the
 * rows that caused it, or not at all, with the next cursor of its key. Due for delivery at
 * once. */
bd_result bd_store_alert_add(bd_store *s, const bd_alert_in *a);

typedef enum { BD_ALERT_PENDING = 0, BD_ALERT_DELIVERED = 1, BD_ALERT_FAILED = 2 } bd_alert_state;

typedef struct {
    int64_t seq;    /* the outbox's own number: lease and settle name an alert by it */
    int64_t cursor; /* the key's own sequence, increasing in commit order of the imports:
                       GET /alerts' cursor; it tells nothing of other keys' alerts */
    bd_slice event_id;
    int64_t watch_id, key_id;
    int watch_type;
    bd_slice watch_shown, breach_uuid, breach_name; /* breach NULL for cards */
    int64_t matched;
    bd_slice identities;
    int64_t created_at, attempts;
    bd_alert_state state;
    bd_slice url, secret; /* alert_lease only; NULL elsewhere */
    int format;           /* the watch's bd_watch_format; alert_lease only (0 elsewhere) */
    int triage;           /* bd_alert_triage; alert_list only (0 elsewhere) */
} bd_alert_row;

typedef int (*bd_alert_cb)(void *ctx, const bd_alert_row *row);

/* The alerts of key_id with cursor > after, by cursor, at most limit. */
bd_result bd_store_alert_list(bd_store *s, int64_t key_id, int64_t after, int limit,
                              bd_alert_cb cb, void *ctx);

/* An analyst's verdict on an alert (PATCH /v7/alerts/{id}, the console), apart from its
 * delivery state. */
typedef enum {
    BD_TRIAGE_NEW = 0,
    BD_TRIAGE_ACKNOWLEDGED = 1,
    BD_TRIAGE_RESOLVED = 2,
    BD_TRIAGE_FALSE_POSITIVE = 3,
} bd_alert_triage;
/* Sets the triage of key_id's alert event_id; BD_ERR_NOT_FOUND when key_id has no such
 * alert (another key's alert included). */
bd_result bd_store_alert_triage(bd_store *s, int64_t key_id, bd_slice event_id, int triage);

/* ---- console sessions signed out (http/console.c) ------------------------------------ */
/* A console session is a sealed cookie any instance opens; signing out writes its id here,
 * so every instance refuses it until until_at (Unix seconds, its last possible moment), and
 * forgets ids whose until_at is before now. id: 32 hex characters. */
bd_result bd_store_session_end(bd_store *s, bd_slice id, int64_t until_at, int64_t now);
/* *ended: whether id was signed out. */
bd_result bd_store_session_ended(bd_store *s, bd_slice id, bool *ended);
/* Takes up to limit pending alerts due at now_ms (Unix milliseconds) that no one holds a
 * lease on, leases them until now_ms + lease_ms, and calls cb for each with its watch's URL
 * and secret. Several servers may call it at once: each alert goes to one of them (until its
 * lease runs out). Outside any open transaction; it never waits for an import's writes.
 * A backend with one writer at a time (SQLite) may instead let one connection per store
 * deliver at a time (the others get nothing) and ignore lease_ms. A due alert whose key is
 * revoked, expired at now_ms or gone is not handed out: it is given up (FAILED) in passing. */
bd_result bd_store_alert_lease(bd_store *s, int64_t now_ms, int64_t lease_ms, int limit,
                               bd_alert_cb cb, void *ctx);
/* The outcome of one attempt at seq: delivered (state DELIVERED), retry at next_ms (state
 * PENDING), or given up (FAILED). attempts is the count so far. Releases the lease. The
 * leasing connection's next leases go by it at once; a backend may write it to the store
 * later (SQLite: when the writer lock is free, at the connection's close at the latest). */
bd_result bd_store_alert_settle(bd_store *s, int64_t seq, bd_alert_state state, int64_t attempts,
                                int64_t next_ms);

/* Deletes up to limit alerts delivered or given up (not pending) that were written before
 * before_s (Unix seconds), oldest first; *removed tells how many. Outside any open
 * transaction. A backend with one writer at a time (SQLite) removes none while another
 * connection writes: BD_ERR_BUSY, *removed 0, and a later call tries again. A backend that can
 * (SQLite's secure_delete) overwrites what it deletes in its main file, as for an erasure;
 * bd_store_truncate_log after a prune that removed some empties the log's copies. */
bd_result bd_store_alert_prune(bd_store *s, int64_t before_s, int limit, int64_t *removed);

/* Rows that land: an importer that matches watches learns here which of its puts went in
 * (a backend that decides duplicates when the rows land calls cb then, not at the put).
 * Lookup keys and shown values are by bd_field; ptr NULL when the row has none. */
typedef struct {
    bool card;
    int64_t breach_id; /* records */
    bd_slice key[BD_FIELD_COUNT], shown[BD_FIELD_COUNT];
    bd_slice bin, number_masked; /* cards */
} bd_landed_row;

typedef void (*bd_landed_cb)(void *ctx, const bd_landed_row *row);

/* Calls cb for every record or card put from now on that lands (NULL: none). */
void bd_store_on_landed(bd_store *s, bd_landed_cb cb, void *ctx);
/* Inside a write transaction: lands every row put so far (their landed calls are made by
 * the time it returns), so what depends on them can join the same transaction. */
bd_result bd_store_flush(bd_store *s);
/* ---- bulk lookup jobs ---------------------------------------------------------------- */

/* A bulk job: many identities of one type looked up in the background (http/jobs.c submits,
 * jobs/runner.c runs). Its identities are kept in chunks of up to BD_JOB_CHUNK, each an
 * opaque blob the store only holds (the packed lookup keys, http/jobs.c); the runner
 * stores each chunk's results in place of its inputs (another opaque blob: what each
 * identity found, as record ids, jobs/result_blob.h) and counts the chunk's identities into
 * `done` and its result rows into `rows` in the same transaction, so a job taken over after
 * a crash resumes at its first chunk without results. A job belongs to the key that
 * submitted it.
 *
 * Result rows are what the results hold: a row per record kept (at most BD_JOB_RECORDS_MAX
 * per identity, jobs/result_blob.h) and one for an identity without records. A key's limits
 * (bd_job_limits) bound its jobs queued or running, their identities not yet looked up, and
 * its result rows kept, counting each identity not yet looked up as the one row it will at
 * least take: so a job is taken only when each of its identities has its row, and records
 * past the key's rows are not kept (the runner cuts them, bd_job_chunk_out). */
#define BD_JOB_CHUNK 1000

typedef enum {
    BD_JOB_QUEUED = 0,
    BD_JOB_RUNNING = 1,
    BD_JOB_DONE = 2,
    BD_JOB_FAILED = 3,
} bd_job_status;

typedef struct {
    char uuid[BD_UUID_LEN + 1];
    int64_t key_id;
    int type; /* bd_field of every identity */
    bd_job_status status;
    int64_t total;       /* identities */
    int64_t done;        /* identities whose results are stored */
    int64_t chunks;      /* input chunks, numbered 0 .. chunks-1 */
    int64_t created_at;  /* Unix seconds */
    int64_t finished_at; /* Unix seconds; 0 while queued or running */
    int64_t attempts;    /* claims that did not follow a yield (job_claim counts them) */
    int64_t lease;       /* the token of the current claim; 0 when never claimed or yielded */
    int64_t rows;        /* result rows stored */
    int64_t truncated;   /* identities whose records were not all kept (the key's limits) */
} bd_job_row;

/* A key's limits on its jobs, each at least 0 (auth/keys.h resolves a key's defaults). */
typedef struct {
    int64_t max_jobs;       /* queued or running at once */
    int64_t max_identities; /* of those, not yet looked up */
    int64_t max_rows;       /* result rows kept, plus one per identity not yet looked up */
} bd_job_limits;

/* What a key's jobs hold now. */
typedef struct {
    int64_t jobs;       /* queued or running */
    int64_t identities; /* of those, not yet looked up */
    int64_t rows;       /* result rows stored in all its jobs (until they expire) */
    int64_t oldest;     /* when its oldest job was created (Unix seconds); 0: it has none */
} bd_job_usage;

/* Stores a queued job (j: uuid, key_id, type, total, created_at; the rest is ignored) and its
 * nchunks input chunks, in one transaction of its own. Unless lim is NULL, it is stored only
 * while the key's jobs with it stay within lim (checked in that transaction, which is
 * ordered with every other of the key's creates and chunks): BD_ERR_LIMIT when they would
 * not, with nothing stored. *usage (may be NULL) gets what the key's jobs held before.
 * BD_ERR_EXISTS for a uuid taken. */
bd_result bd_store_job_create(bd_store *s, const bd_job_row *j, const bd_slice *chunks,
                              size_t nchunks, const bd_job_limits *lim, bd_job_usage *usage);
/* What key_id's jobs hold now into *out. */
bd_result bd_store_job_usage(bd_store *s, int64_t key_id, bd_job_usage *out);
/* The job uuid of key_id into *out; BD_ERR_NOT_FOUND when there is none, or it is another
 * key's (a caller cannot tell the two apart). */
bd_result bd_store_job_get(bd_store *s, const char *uuid, int64_t key_id, bd_job_row *out);
/* Claims one job for the caller: of the jobs waiting (queued, yielded, or running under a
 * lease that ended before now: its runner died), the oldest of the key whose jobs were
 * claimed least recently, so that keys take turns whatever one of them queued. It becomes
 * running with a new lease token (random, non-zero) until now + lease_s, and its attempts
 * grow by one unless it was yielded; *out gets it. Safe with any number of claimers in any
 * number of processes: each job goes to one. BD_ERR_NOT_FOUND when no job waits. */
bd_result bd_store_job_claim(bd_store *s, int64_t now, int64_t lease_s, bd_job_row *out);
/* Gives back a job held under lease that still has chunks to run: it stays running, with no
 * lease, for a claim in its turn. BD_ERR_BUSY when it was taken over. */
bd_result bd_store_job_yield(bd_store *s, const char *uuid, int64_t lease);
/* The first chunk of uuid numbered from or more without results: its number into *chunk_no
 * and its inputs into inputs (replacing what it held). BD_ERR_NOT_FOUND when there is none. */
bd_result bd_store_job_next_chunk(bd_store *s, const char *uuid, int64_t from, int64_t *chunk_no,
                                  bd_buf *inputs);
/* One chunk's results, as bd_store_job_chunk_done stores them. */
typedef struct {
    int64_t chunk_no;
    int64_t n;         /* its identities */
    int64_t rows;      /* its result rows */
    int64_t truncated; /* its identities whose records were not all kept */
    bd_slice results;
    int64_t lease_until;
    int64_t max_rows; /* the key's limit on rows (bd_job_limits); 0: none */
} bd_job_chunk_out;
/* In one transaction of its own: stores c's results in place of the chunk's inputs, adds n
 * to the job's done, rows and truncated to its own, and renews its lease to lease_until,
 * only while the caller still holds the lease (token lease); BD_ERR_BUSY, with nothing
 * written, when it was taken over. BD_ERR_LIMIT, with nothing written, when max_rows > 0 and
 * the key's rows stored plus its identities not yet looked up would pass max_rows by more
 * than the chunk's identities' own rows (rows - n): what another runner stored meanwhile
 * took them. */
bd_result bd_store_job_chunk_done(bd_store *s, const char *uuid, int64_t lease,
                                  const bd_job_chunk_out *c);
/* Ends a job held under lease as done or failed at now. BD_ERR_BUSY when it was taken
 * over. */
bd_result bd_store_job_finish(bd_store *s, const char *uuid, int64_t lease, bd_job_status status,
                              int64_t now);
/* One chunk's results into out, replacing what it held; BD_ERR_NOT_FOUND when the job has
 * no such chunk or the chunk no results. */
bd_result bd_store_job_result(bd_store *s, const char *uuid, int64_t chunk_no, bd_buf *out);
/* Deletes every job created before `before` (Unix seconds), with its chunks, in one
 * transaction; *removed gets how many jobs went. SQLite overwrites what it deletes
 * (secure_delete); its log still holds copies until bd_store_truncate_log. */
bd_result bd_store_job_expire(bd_store *s, int64_t before, int64_t *removed);

/* ---- erasure and backup ------------------------------------------------------------ */

typedef struct {
    bd_slice uuid, source_name;
    int64_t records;
    int64_t pwned_count;
} bd_stats_row;

typedef int (*bd_stats_cb)(void *ctx, const bd_stats_row *row);

/* Removes every record whose (normalised) email is email, in every breach, and refreshes
 * the affected breaches' identity counts, in one transaction. cb is called once per
 * affected breach with the number of records removed from it; *removed gets the total. */
bd_result bd_store_erase_email(bd_store *s, const char *email, bd_stats_cb cb, void *ctx,
                               int64_t *removed);
/* Removes a breach and all its records in one transaction; BD_ERR_NOT_FOUND when absent. */
bd_result bd_store_erase_breach(bd_store *s, const char *uuid, int64_t *records_removed);
/* Both erasures overwrite what they delete in the store's main file; a backend with a log
 * file (capability write_ahead_log_file: SQLite's write-ahead log) still holds earlier
 * copies there, and elsewhere this does nothing. This empties the log into the
 * main file and truncates it to zero bytes, waiting up to wait_ms for readers of older
 * snapshots to let go. Call it after an erasure. BD_ERR_BUSY when readers held the log past
 * the wait (the erasure stands; calling again finishes it). */
bd_result bd_store_truncate_log(bd_store *s, int64_t wait_ms);
/* Writes a consistent copy of the store into dest while others keep reading and writing
 * (capability online_backup; a store without it returns BD_ERR_INVALID).
 * dest must be an empty regular file the caller created (O_EXCL, mode 0600) and holds open as
 * dest_fd: it is opened by name without following a symbolic link and never created, and
 * written only when the file opened is dest_fd's. BD_ERR_IO when dest is gone or was
 * replaced (nothing written); a store error otherwise. */
bd_result bd_store_backup(bd_store *s, const char *dest, int dest_fd);

/* One table's place in a cluster (bd_store_distribute): distributed by column (co-located
 * with another table's shards when colocate_with is not NULL), or a reference table copied
 * to every node (column NULL); before: it was laid out so already. */
typedef struct {
    const char *table;
    const char *column;
    const char *colocate_with;
    bool before;
} bd_layout_row;
typedef int (*bd_layout_cb)(void *ctx, const bd_layout_row *row);
/* Lays the store out over the nodes of the cluster whose coordinator it is on
 * (docs/SCALING.md's layout; capability cluster_layout), telling cb of each table the layout
 * names, in order; a table laid out before is left as it is, so running it again changes
 * nothing. *clustered: whether the database is a cluster's coordinator (false: nothing
 * done, BD_OK). BD_ERR_INVALID without the capability. */
bd_result bd_store_distribute(bd_store *s, bool *clustered, bd_layout_cb cb, void *ctx);

/* ---- the change log ------------------------------------------------------------------ */

/* Every committed write that changes what searches and the catalog answer leaves rows in a
 * log, in the same transaction: a breach added, changed (its identity count moved) or
 * removed, records added or removed per breach, cards added per leak. Each row has a
 * sequence number, store-wide and increasing in commit order (writers are serialised), so
 * a reader that saw every row up to seq N and asks for those after N misses none. The
 * latest seq is the store's data version: equal on every server of one store. */
typedef enum {
    BD_CHANGE_BREACH_ADDED = 1,   /* subject: breach uuid; count 1 */
    BD_CHANGE_BREACH_CHANGED = 2, /* subject: breach uuid; count: its pwned_count now */
    BD_CHANGE_BREACH_REMOVED = 3, /* subject: breach uuid; count: the records it took along */
    BD_CHANGE_RECORDS_ADDED = 4,  /* subject: breach uuid; count: records added */
    BD_CHANGE_RECORDS_REMOVED = 5, /* subject: breach uuid; count: records erased */
    BD_CHANGE_CARDS_ADDED = 6,    /* subject: the cards' leak id (NULL when none); count */
} bd_change_kind;

typedef struct {
    int64_t seq;
    int64_t at; /* Unix seconds of the commit's write */
    bd_change_kind kind;
    bd_slice subject; /* breach uuid or leak id */
    bd_slice name;    /* the breach's source name now (NULL once erased: the log keeps no
                         name of what was erased), or the cards' leak name */
    int64_t count;
} bd_change_row;

typedef int (*bd_change_cb)(void *ctx, const bd_change_row *row);

/* The log's rows with seq > after, in seq order, at most limit of them. */
bd_result bd_store_changes(bd_store *s, int64_t after, int limit, bd_change_cb cb, void *ctx);
/* The data version: the latest seq of the log (0 for an empty store). One index lookup. */
bd_result bd_store_change_version(bd_store *s, int64_t *version);

typedef struct {
    int64_t version;        /* the latest seq */
    int64_t last_change_at; /* Unix seconds; 0: never */
    int64_t last_import_at; /* the latest records or cards added; 0: never */
    int64_t breaches, records, cards;
} bd_store_status;

/* The store's status, read in one statement from the log and the breach table: its cost
 * grows with the log (a row per breach per committed batch), not with the corpus. */
bd_result bd_store_status_get(bd_store *s, bd_store_status *out);

/* What waits in the store's queues, for /metrics: bulk jobs queued or running, and alerts
 * pending delivery (due or waiting for a retry). Two counts, each read from an index. */
typedef struct {
    int64_t jobs_waiting;
    int64_t alerts_pending;
} bd_store_queues;
bd_result bd_store_queue_depths(bd_store *s, bd_store_queues *out);

/* ---- statistics -------------------------------------------------------------------- */

bd_result bd_store_stats(bd_store *s, bd_stats_cb cb, void *ctx, int64_t *total_records,
                         int64_t *total_cards);

#endif
