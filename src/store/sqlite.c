/* SQLite backend of store.h, reached through its operations table (store_impl.h): one
 * connection per bd_store, statements prepared once and reset between uses, generated search
 * SQL cached per connection. */
#include <math.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/private_file.h"
#include "store/schema.h"
#include "store/store_impl.h"

/* Fixed statements, prepared on first use and kept for the connection's life. */
enum {
    Q_META_GET,
    Q_META_SET,
    Q_BEGIN,
    Q_BEGIN_READ,
    Q_COMMIT,
    Q_ROLLBACK,
    Q_PING,
    Q_BREACH_PUT,
    Q_BREACH_LIST,
    Q_BREACH_LIST_LIMIT,
    Q_BREACH_GET,
    Q_BREACH_BY_ID,
    Q_BREACH_ID,
    Q_BREACH_REFRESH,
    Q_RECORD_PUT,
    Q_CARD_PUT,
    Q_CARD_WORDS_PUT,
    Q_CARD_OWNER_WORD_PUT,
    Q_CARD_COUNT_ADD,
    Q_CARD_COUNT_SUM,
    Q_KEY_ADD,
    Q_KEY_LIST,
    Q_KEY_REVOKE,
    Q_KEY_BUMP,
    Q_STATS,
    Q_ERASE_EMAIL_BREACHES,
    Q_ERASE_EMAIL,
    Q_ERASE_BREACH_RECORDS,
    Q_ERASE_BREACH,
    Q_COUNT_RECORDS,
    Q_DOMAIN_COUNT,
    Q_DOMAIN_COUNT_ADD,
    Q_ERASE_EMAIL_DOMAINS,
    Q_ERASE_BREACH_DOMAINS,
    Q_COUNT_CARDS,
    Q_MAX_CARD,
    Q__COUNT
};

/* The breach columns every breach-returning query selects, in bd_breach_row order. */
#define BREACH_COLS                                                                                \
    "b.uuid, b.source_name, b.site_domain, b.breach_type, b.site_categories, b.site_country, "     \
    "b.site_language, b.password_types, b.leaked_data_types, b.description, "                      \
    "b.service_article_url, b.site_logo, b.date_leaked, "                                          \
    "coalesce(b.pwned_count, b.pwned_count_derived)"
#define BREACH_NCOLS 14

static const char *const FIXED_SQL[Q__COUNT] = {
    [Q_META_GET] = "SELECT value FROM meta WHERE key = ?1",
    [Q_META_SET] = "INSERT INTO meta(key, value) VALUES (?1, ?2) "
                   "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
    [Q_BEGIN] = "BEGIN IMMEDIATE",
    [Q_BEGIN_READ] = "BEGIN DEFERRED",
    [Q_COMMIT] = "COMMIT",
    [Q_ROLLBACK] = "ROLLBACK",
    [Q_PING] = "SELECT count(*) FROM meta", /* reads the file: SELECT 1 would not */
    [Q_BREACH_PUT] =
        "INSERT INTO breaches(uuid, source_name, site_domain, breach_type, site_categories, "
        "site_country, site_language, password_types, leaked_data_types, description, "
        "service_article_url, site_logo, date_leaked, pwned_count) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14) "
        "ON CONFLICT(uuid) DO NOTHING",
    [Q_BREACH_LIST] = "SELECT " BREACH_COLS " FROM breaches b "
                      "ORDER BY b.date_leaked DESC, b.source_name, b.uuid",
    [Q_BREACH_LIST_LIMIT] = "SELECT " BREACH_COLS " FROM breaches b "
                            "ORDER BY b.date_leaked DESC, b.source_name, b.uuid LIMIT ?1",
    [Q_BREACH_GET] = "SELECT " BREACH_COLS " FROM breaches b WHERE b.uuid = ?1",
    [Q_BREACH_BY_ID] = "SELECT " BREACH_COLS " FROM breaches b WHERE b.id = ?1",
    [Q_BREACH_ID] = "SELECT id, date_leaked FROM breaches WHERE uuid = ?1",
    [Q_BREACH_REFRESH] =
        "UPDATE breaches SET pwned_count_derived = (SELECT count(DISTINCT coalesce(email, "
        "user_name_key, phone_key, ip_address, bitcoin_address, hex(ssn_hmac), "
        "password_hash)) FROM records WHERE breach_id = breaches.id) "
        "WHERE uuid = ?1 AND pwned_count IS NULL", /* an imported count is what is shown */
    [Q_RECORD_PUT] =
        "INSERT INTO records(breach_id, breach_date, user_name, user_name_key, first_name, "
        "last_name, email, email_domain, phone_number, phone_key, ip_address, bitcoin_address, "
        "password_masked, password_hmac, password_hash, ssn_masked, ssn_hmac, "
        "other_attributes, severity, dedup) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, "
        "?18, ?19, ?20) ON CONFLICT(dedup) DO NOTHING",
    [Q_CARD_PUT] =
        "INSERT INTO cards(card_id, created_at, bank, number_masked, bin, last4, tail, length, "
        "number_hmac, owner, cvv, expire_date, cvss, leak_id, leak_name, leak_publish_date, "
        "leak_discover_date, leak_size, leak_tags) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, "
        "?18, ?19) ON CONFLICT(card_id) DO NOTHING",
    [Q_CARD_WORDS_PUT] = "INSERT INTO cards_words(rowid, owner, bank) VALUES (?1, ?2, ?3)",
    [Q_CARD_OWNER_WORD_PUT] = "INSERT OR IGNORE INTO card_owner_words(word, expire_date, id) "
                              "VALUES (?1, ?2, ?3)",
    [Q_CARD_COUNT_ADD] = "INSERT INTO card_counts(kind, key, n) VALUES (?1, ?2, 1) "
                         "ON CONFLICT(kind, key) DO UPDATE SET n = n + 1",
    [Q_CARD_COUNT_SUM] = "SELECT coalesce(sum(n), 0) FROM card_counts "
                         "WHERE kind = ?1 AND key >= ?2 AND key < ?3",
    [Q_KEY_ADD] = "INSERT INTO api_keys(name, hash, plan, rate_per_hour, created_at, "
                  "expires_at, exact_per_day) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    [Q_KEY_LIST] = "SELECT id, name, hash, plan, rate_per_hour, created_at, expires_at, "
                   "revoked_at, exact_per_day FROM api_keys ORDER BY id",
    [Q_KEY_REVOKE] = "UPDATE api_keys SET revoked_at = ?2 WHERE id = ?1 AND revoked_at = 0",
    [Q_KEY_BUMP] = "UPDATE meta SET value = CAST(value AS INTEGER) + 1 "
                   "WHERE key = 'key_generation'",
    [Q_STATS] = "SELECT b.uuid, b.source_name, "
                "(SELECT count(*) FROM records r WHERE r.breach_id = b.id), "
                "coalesce(b.pwned_count, b.pwned_count_derived) FROM breaches b "
                "ORDER BY b.date_leaked DESC, b.source_name, b.uuid",
    [Q_COUNT_RECORDS] = "SELECT count(*) FROM records",
    [Q_DOMAIN_COUNT] = "SELECT n FROM domain_counts WHERE domain = ?1",
    [Q_DOMAIN_COUNT_ADD] = "INSERT INTO domain_counts(domain, n) VALUES (?1, 1) "
                           "ON CONFLICT(domain) DO UPDATE SET n = n + 1",
    /* run before the records go: takes their number off each of their domains */
    [Q_ERASE_EMAIL_DOMAINS] = "UPDATE domain_counts SET n = domain_counts.n - gone.n FROM ("
                              "  SELECT email_domain AS domain, count(*) AS n FROM records"
                              "  WHERE email = ?1 AND email_domain IS NOT NULL GROUP BY 1) AS gone "
                              "WHERE domain_counts.domain = gone.domain",
    [Q_ERASE_BREACH_DOMAINS] = "UPDATE domain_counts SET n = domain_counts.n - gone.n FROM ("
                               "  SELECT email_domain AS domain, count(*) AS n FROM records"
                               "  WHERE breach_id = (SELECT id FROM breaches WHERE uuid = ?1)"
                               "  AND email_domain IS NOT NULL GROUP BY 1) AS gone "
                               "WHERE domain_counts.domain = gone.domain",
    [Q_ERASE_EMAIL_BREACHES] = "SELECT b.uuid, b.source_name, count(*), 0 FROM records r "
                               "JOIN breaches b ON b.id = r.breach_id WHERE r.email = ?1 "
                               "GROUP BY b.id ORDER BY b.date_leaked DESC, b.source_name",
    [Q_ERASE_EMAIL] = "DELETE FROM records WHERE email = ?1",
    [Q_ERASE_BREACH_RECORDS] = "DELETE FROM records WHERE breach_id = "
                               "(SELECT id FROM breaches WHERE uuid = ?1)",
    [Q_ERASE_BREACH] = "DELETE FROM breaches WHERE uuid = ?1",
    [Q_COUNT_CARDS] = "SELECT count(*) FROM cards",
    [Q_MAX_CARD] = "SELECT coalesce(max(id), 0) FROM cards",
};

/* Bound values collected while a condition tree is written as SQL. */
typedef struct {
    enum { BIND_TEXT, BIND_BLOB, BIND_INT } type;
    const void *ptr;
    int len;
    int64_t n;
} bind_value;

#define MAX_BINDS 512

typedef struct {
    bd_buf *sql;
    bd_buf *text; /* strings made for binding (GLOB and MATCH patterns), NUL-separated */
    bind_value binds[MAX_BINDS];
    size_t nbinds;
    bd_result err;
} cond_sql;

#define DYN_CACHE 32
#define BREACH_CACHE 256 /* a power of two */

typedef struct {
    char uuid[BD_UUID_LEN + 1];
    int64_t id;
    int32_t date;
} breach_slot;

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
     * never change id or date; erasing one empties the cache. */
    breach_slot breach_cache[BREACH_CACHE];
    /* card search: the SQL being built, its bound values and the strings made for them */
    cond_sql cond;
    bd_buf text;
    bool bulk_cards;   /* in a bulk card load: words and counts are rebuilt at its end */
    bool bulk_records; /* in a bulk record load: domain counts are recounted at its end */
    /* FTS5's own unicode61 tokenizer, made on first use: card_owner_words must hold exactly
     * the words the FTS5 index holds, and a query word must be split the same way. */
    fts5_tokenizer tokenizer;
    Fts5Tokenizer *words;
} sqlite_store;

static inline sqlite_store *S(bd_store *s)
{
    return (sqlite_store *)s;
}

static bd_result map_rc(int rc)
{
    switch (rc) {
    case SQLITE_OK:
    case SQLITE_DONE:
    case SQLITE_ROW:
        return BD_OK;
    case SQLITE_NOMEM:
        return BD_ERR_NOMEM;
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_CANTOPEN:
        return BD_ERR_BUSY;
    case SQLITE_CONSTRAINT:
        return BD_ERR_EXISTS;
    default:
        return BD_ERR_STORE;
    }
}

/* Returns the reset, unbound fixed statement q, preparing it once. NULL on failure. */
static sqlite3_stmt *fixed(sqlite_store *s, int q)
{
    sqlite3_stmt *st = s->fixed[q];
    if (!st) {
        if (sqlite3_prepare_v3(s->db, FIXED_SQL[q], -1, SQLITE_PREPARE_PERSISTENT, &st, NULL) !=
            SQLITE_OK) {
            fprintf(stderr, "store: prepare failed: %s\n", sqlite3_errmsg(s->db));
            return NULL;
        }
        s->fixed[q] = st;
    }
    return st;
}

/* Returns the statement for generated SQL text, from the per-connection cache when this
 * shape of query ran before; evicts the least recently used entry when full. */
static sqlite3_stmt *dynamic(sqlite_store *s, const char *sql)
{
    int victim = 0;
    for (int i = 0; i < DYN_CACHE; i++) {
        if (s->dyn[i].sql && strcmp(s->dyn[i].sql, sql) == 0) {
            s->dyn[i].used = ++s->tick;
            return s->dyn[i].stmt;
        }
        if (s->dyn[i].used < s->dyn[victim].used)
            victim = i;
    }
    sqlite3_stmt *st;
    if (sqlite3_prepare_v3(s->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &st, NULL) != SQLITE_OK) {
        fprintf(stderr, "store: prepare failed: %s\n", sqlite3_errmsg(s->db));
        return NULL;
    }
    char *copy = strdup(sql);
    if (!copy) {
        sqlite3_finalize(st);
        return NULL;
    }
    sqlite3_finalize(s->dyn[victim].stmt);
    free(s->dyn[victim].sql);
    s->dyn[victim].sql = copy;
    s->dyn[victim].stmt = st;
    s->dyn[victim].used = ++s->tick;
    return st;
}

static void done(sqlite3_stmt *st)
{
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
}

static void bind_slice(sqlite3_stmt *st, int i, bd_slice v)
{
    if (v.ptr)
        sqlite3_bind_text(st, i, v.ptr, (int)v.len, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, i);
}

static void bind_blob(sqlite3_stmt *st, int i, bd_slice v)
{
    if (v.ptr)
        sqlite3_bind_blob(st, i, v.ptr, (int)v.len, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, i);
}

static bd_slice col_slice(sqlite3_stmt *st, int i)
{
    const char *p = (const char *)sqlite3_column_text(st, i);
    if (!p)
        return (bd_slice){NULL, 0};
    return (bd_slice){p, (size_t)sqlite3_column_bytes(st, i)};
}

/* Runs a statement that returns no rows, then resets it. */
static bd_result step_done(sqlite_store *s, sqlite3_stmt *st)
{
    int rc = sqlite3_step(st);
    bd_result r = map_rc(rc);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW)
        fprintf(stderr, "store: %s\n", sqlite3_errmsg(s->db));
    done(st);
    return r;
}

static bd_result exec(sqlite_store *s, const char *sql)
{
    char *err = NULL;
    int rc = sqlite3_exec(s->db, sql, NULL, NULL, &err);
    if (rc != SQLITE_OK) {
        fprintf(stderr, "store: %s\n", err ? err : sqlite3_errmsg(s->db));
        sqlite3_free(err);
    }
    return map_rc(rc);
}

static int schema_version(sqlite_store *s)
{
    sqlite3_stmt *st;
    int v = -1;
    if (sqlite3_prepare_v2(s->db, "PRAGMA user_version", -1, &st, NULL) == SQLITE_OK) {
        if (sqlite3_step(st) == SQLITE_ROW)
            v = sqlite3_column_int(st, 0);
        sqlite3_finalize(st);
    }
    return v;
}

static bd_result migrate(sqlite_store *s, char *why, size_t whylen)
{
    int v = schema_version(s);
    if (v < 0 || v > bd_sqlite_migration_count) {
        snprintf(why, whylen, "the store's schema version %d is newer than this program", v);
        return BD_ERR_STORE;
    }
    for (; v < bd_sqlite_migration_count; v++) {
        char pragma[64];
        snprintf(pragma, sizeof pragma, "PRAGMA user_version = %d", v + 1);
        bd_result r = exec(s, "BEGIN IMMEDIATE");
        if (r == BD_OK)
            r = exec(s, bd_sqlite_migrations[v]);
        if (r == BD_OK)
            r = exec(s, pragma);
        if (r == BD_OK)
            r = exec(s, "COMMIT");
        if (r != BD_OK) {
            exec(s, "ROLLBACK");
            snprintf(why, whylen, "schema migration %d failed", v + 1);
            return r;
        }
    }
    return BD_OK;
}

/* Process-wide SQLite settings, applied once before the first connection: memory
 * statistics take a global mutex on every allocation, which every server thread would
 * contend on, and nothing here reads them. */
static void configure_sqlite(void)
{
    sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
    sqlite3_initialize();
}

/* The store's files are for its owner alone. A writer creates the main file 0600 itself
 * before SQLite opens it (SQLite gives the -wal and -shm files the main file's mode, whatever
 * the umask), and takes the group and other bits off any of the three that an older version
 * or a looser umask left readable. */
static bd_result make_private(const char *path, bool create, char *why, size_t whylen)
{
    if (strcmp(path, ":memory:") == 0 || strncmp(path, "file:", 5) == 0)
        return BD_OK;
    bd_result r = bd_private_file_restrict(path, create, why, whylen);
    char side[4096];
    for (int i = 0; r == BD_OK && i < 2; i++) {
        if ((size_t)snprintf(side, sizeof side, "%s%s", path, i ? "-shm" : "-wal") < sizeof side)
            r = bd_private_file_restrict(side, false, why, whylen);
    }
    return r;
}

static const bd_store_ops sqlite_ops;

static void sq_close(bd_store *base)
{
    sqlite_store *s = S(base);
    for (int i = 0; i < Q__COUNT; i++)
        sqlite3_finalize(s->fixed[i]);
    for (int i = 0; i < DYN_CACHE; i++) {
        sqlite3_finalize(s->dyn[i].stmt);
        free(s->dyn[i].sql);
    }
    if (s->words)
        s->tokenizer.xDelete(s->words);
    sqlite3_close(s->db);
    bd_buf_free(&s->sql);
    bd_buf_free(&s->text);
    pthread_mutex_destroy(&s->read_lock);
    free(s);
}

bd_result bd_sqlite_open(const char *path, int flags, bd_store **out, char *why, size_t whylen)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, configure_sqlite);
    *out = NULL;
    if ((flags & BD_STORE_WRITE) &&
        make_private(path, flags & BD_STORE_CREATE, why, whylen) != BD_OK)
        return BD_ERR_IO;
    sqlite_store *s = calloc(1, sizeof *s);
    if (!s)
        return BD_ERR_NOMEM;
    bd_buf_init(&s->sql, 16384);
    bd_buf_init(&s->text, 65536);
    s->base.ops = &sqlite_ops;
    pthread_mutex_init(&s->read_lock, NULL);
    int oflags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX;
    if (flags & BD_STORE_CREATE)
        oflags |= SQLITE_OPEN_CREATE;
    int rc = sqlite3_open_v2(path, &s->db, oflags, NULL);
    bd_result r;
    if (rc != SQLITE_OK) {
        r = rc == SQLITE_CANTOPEN ? BD_ERR_NOT_FOUND : map_rc(rc);
        snprintf(why, whylen, "cannot open the store %s: %s", path,
                 s->db ? sqlite3_errmsg(s->db) : "out of memory");
        goto fail;
    }
    sqlite3_busy_timeout(s->db, 10000);
    /* A new store gets 16 KiB pages: a quarter of the I/O calls of the 4 KiB default for
     * the same data, which is what bulk import and index range scans pay for. Only takes
     * effect before the first table exists. */
    if (flags & BD_STORE_CREATE)
        exec(s, "PRAGMA page_size=16384");
    sqlite3_extended_result_codes(s->db, 0);
    /* WAL lets the server read while breachctl imports; NORMAL sync is durable at each
     * checkpoint and never corrupts, which is the trade-off WAL documents. */
    /* Readers map up to 2 GiB of the store (SQLite's cap in Debian's build): the benchmark's
     * profile of a card search on a 0.8 GB store spent 65% of its time in pread(2) for
     * pages past the former 256 MiB window. The mapping shares the OS page cache. */
    r = exec(s, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=OFF;"
                "PRAGMA cache_size=-65536; PRAGMA mmap_size=2147418112; "
                "PRAGMA temp_store=MEMORY");
    if (r != BD_OK) {
        snprintf(why, whylen, "%s is not a breachd store (or is locked)", path);
        goto fail;
    }
    int v = schema_version(s);
    if (v == 0 && !(flags & BD_STORE_CREATE)) {
        snprintf(why, whylen, "%s holds no breachd store; run 'breachctl init --db %s'", path,
                 path);
        r = BD_ERR_NOT_FOUND;
        goto fail;
    }
    if ((flags & BD_STORE_WRITE) || v != bd_sqlite_migration_count) {
        r = migrate(s, why, whylen);
        if (r != BD_OK)
            goto fail;
    }
    if (!(flags & BD_STORE_WRITE))
        exec(s, "PRAGMA query_only=1");
    else /* bulk writers: fold the WAL back every 256 MiB, not every 4 MiB (each fsyncs);
          * a 1 GiB page cache (allocated only as used) keeps the random-key index pages
          * of a few million records in memory, where import cost grows once they spill */
        exec(s, "PRAGMA wal_autocheckpoint=16384; PRAGMA cache_size=-1048576; "
                "PRAGMA mmap_size=0");
    if (flags & BD_STORE_WRITE) {
        /* Index builds after a bulk load sort with helper threads, one per spare core. */
        char pragma[32];
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        snprintf(pragma, sizeof pragma, "PRAGMA threads=%ld",
                 cores > 1 ? (cores < 8 ? cores - 1 : 7) : 0);
        exec(s, pragma);
    }
    *out = &s->base;
    return BD_OK;
fail:
    sq_close(&s->base);
    return r;
}

static bd_result sq_meta_get(bd_store *base, const char *key, char *out, size_t outcap)
{
    sqlite_store *s = S(base);
    sqlite3_stmt *st = fixed(s, Q_META_GET);
    if (!st)
        return BD_ERR_STORE;
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    bd_result r = BD_ERR_NOT_FOUND;
    if (rc == SQLITE_ROW) {
        bd_slice v = col_slice(st, 0);
        if (v.len + 1 > outcap) {
            r = BD_ERR_LIMIT;
        } else {
            memcpy(out, v.ptr, v.len);
            out[v.len] = '\0';
            r = BD_OK;
        }
    } else if (rc != SQLITE_DONE) {
        r = map_rc(rc);
    }
    done(st);
    return r;
}

static bd_result sq_meta_set(bd_store *base, const char *key, const char *value)
{
    sqlite_store *s = S(base);
    sqlite3_stmt *st = fixed(s, Q_META_SET);
    if (!st)
        return BD_ERR_STORE;
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, value, -1, SQLITE_STATIC);
    return step_done(s, st);
}

static bd_result run_fixed(sqlite_store *s, int q)
{
    sqlite3_stmt *st = fixed(s, q);
    return st ? step_done(s, st) : BD_ERR_STORE;
}

static bd_result sq_begin(bd_store *base)
{
    return run_fixed(S(base), Q_BEGIN);
}

static bd_result sq_commit(bd_store *base)
{
    return run_fixed(S(base), Q_COMMIT);
}

static void sq_rollback(bd_store *base)
{
    sqlite_store *s = S(base);
    if (!sqlite3_get_autocommit(s->db))
        run_fixed(s, Q_ROLLBACK);
}

static int64_t monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Starting a WAL read view costs a file lock, a stat and a mutex that every connection of
 * the process shares: 14% of the server's CPU on the benchmark's hot path, where a request
 * is one index lookup. Sharing a view for a couple of milliseconds makes that rare. */
static bd_result sq_read_begin(bd_store *base)
{
    sqlite_store *s = S(base);
    if (!s->share_ns)
        return run_fixed(s, Q_BEGIN_READ);
    pthread_mutex_lock(&s->read_lock);
    int64_t now = monotonic_ns();
    bool open = !sqlite3_get_autocommit(s->db); /* an error may have rolled it back */
    if (open && s->view_began && now - s->view_began < s->share_ns)
        return BD_OK;
    if (open)
        run_fixed(s, Q_COMMIT);
    s->view_began = 0;
    bd_result r = run_fixed(s, Q_BEGIN_READ);
    if (r == BD_OK)
        s->view_began = now;
    return r; /* the lock is released by read_end, which follows even a failed begin */
}

static void sq_read_end(bd_store *base)
{
    sqlite_store *s = S(base);
    if (s->share_ns) {
        pthread_mutex_unlock(&s->read_lock);
        return;
    }
    if (!sqlite3_get_autocommit(s->db))
        run_fixed(s, Q_COMMIT);
}

static void sq_share_reads(bd_store *base, int64_t window_us)
{
    S(base)->share_ns = window_us > 0 ? window_us * 1000 : 0;
}

static uint64_t sq_data_version(bd_store *base)
{
    sqlite_store *s = S(base);
    /* SQLite's pager counts content changes, its own and other connections' (seen when a
     * read begins), without running a statement. */
    unsigned int v = 0;
    if (sqlite3_file_control(s->db, "main", SQLITE_FCNTL_DATA_VERSION, &v) != SQLITE_OK)
        return 0;
    return v;
}

static void sq_release_idle(bd_store *base)
{
    sqlite_store *s = S(base);
    if (!s->share_ns || pthread_mutex_trylock(&s->read_lock) != 0)
        return;
    if (s->view_began && monotonic_ns() - s->view_began >= s->share_ns) {
        if (!sqlite3_get_autocommit(s->db))
            run_fixed(s, Q_COMMIT);
        s->view_began = 0;
    }
    pthread_mutex_unlock(&s->read_lock);
}

/* Drops every index the given DDL creates; the names are read out of its CREATE INDEX
 * statements, so the list of indexes lives only in schema.c. */
static bd_result drop_indexes(sqlite_store *s, const char *ddl)
{
    static const char create[] = "CREATE INDEX ";
    bd_result r = BD_OK;
    for (const char *p = ddl; r == BD_OK && (p = strstr(p, create)) != NULL;) {
        p += sizeof create - 1;
        size_t n = strcspn(p, " ");
        char sql[128];
        snprintf(sql, sizeof sql, "DROP INDEX IF EXISTS %.*s", (int)n, p);
        r = exec(s, sql);
    }
    return r;
}

static bd_result sq_bulk_begin(bd_store *base, bd_bulk_kind kind)
{
    sqlite_store *s = S(base);
    if (sqlite3_get_autocommit(s->db))
        return BD_ERR_INVALID; /* only inside the load's own transaction */
    if (kind == BD_BULK_CARDS)
        s->bulk_cards = true;
    else
        s->bulk_records = true;
    return drop_indexes(s, kind == BD_BULK_RECORDS ? bd_sqlite_record_indexes
                                                   : bd_sqlite_card_indexes);
}

static bd_result sq_bulk_end(bd_store *base, bd_bulk_kind kind)
{
    sqlite_store *s = S(base);
    if (kind == BD_BULK_RECORDS) {
        s->bulk_records = false;
        bd_result r = exec(s, bd_sqlite_record_indexes);
        return r == BD_OK ? exec(s, bd_sqlite_domain_count_rebuild) : r;
    }
    s->bulk_cards = false;
    bd_result r = exec(s, bd_sqlite_card_indexes);
    if (r == BD_OK)
        r = exec(s, "INSERT INTO cards_words(cards_words) VALUES ('rebuild');"
                    "DELETE FROM card_counts;"
                    "INSERT INTO card_counts(kind, key, n) "
                    "  SELECT 0, bin, count(*) FROM cards GROUP BY bin;"
                    "INSERT INTO card_counts(kind, key, n) "
                    "  SELECT 1, tail, count(*) FROM cards GROUP BY tail;");
    return r;
}

static bd_result sq_ping(bd_store *base)
{
    return run_fixed(S(base), Q_PING);
}

/* ---- breaches ---------------------------------------------------------------------- */

/* Fills a breach row from BREACH_COLS starting at column c. */
static void breach_from_cols(sqlite3_stmt *st, int c, bd_breach_row *b)
{
    b->uuid = col_slice(st, c + 0);
    b->source_name = col_slice(st, c + 1);
    b->site_domain = col_slice(st, c + 2);
    b->breach_type = col_slice(st, c + 3);
    b->site_categories = col_slice(st, c + 4);
    b->site_country = col_slice(st, c + 5);
    b->site_language = col_slice(st, c + 6);
    b->password_types = col_slice(st, c + 7);
    b->leaked_data_types = col_slice(st, c + 8);
    b->description = col_slice(st, c + 9);
    b->service_article_url = col_slice(st, c + 10);
    b->site_logo = col_slice(st, c + 11);
    b->date_leaked = sqlite3_column_int(st, c + 12);
    b->pwned_count = sqlite3_column_int64(st, c + 13);
}

static bd_result sq_breach_put(bd_store *base, const bd_breach_in *b, bool *inserted)
{
    sqlite_store *s = S(base);
    sqlite3_stmt *st = fixed(s, Q_BREACH_PUT);
    if (!st)
        return BD_ERR_STORE;
    sqlite3_bind_text(st, 1, b->uuid, -1, SQLITE_STATIC);
    bind_slice(st, 2, b->source_name);
    bind_slice(st, 3, b->site_domain);
    bind_slice(st, 4, b->breach_type);
    bind_slice(st, 5, b->site_categories);
    bind_slice(st, 6, b->site_country);
    bind_slice(st, 7, b->site_language);
    bind_slice(st, 8, b->password_types);
    bind_slice(st, 9, b->leaked_data_types);
    bind_slice(st, 10, b->description);
    bind_slice(st, 11, b->service_article_url);
    bind_slice(st, 12, b->site_logo);
    sqlite3_bind_int(st, 13, b->date_leaked);
    if (b->pwned_count >= 0)
        sqlite3_bind_int64(st, 14, b->pwned_count);
    else
        sqlite3_bind_null(st, 14);
    bd_result r = step_done(s, st);
    *inserted = r == BD_OK && sqlite3_changes(s->db) > 0;
    return r;
}

static bd_result each_breach(sqlite3_stmt *st, bd_breach_cb cb, void *ctx, int *rows)
{
    int rc;
    *rows = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        bd_breach_row b;
        breach_from_cols(st, 0, &b);
        ++*rows;
        if (cb(ctx, &b))
            break;
    }
    bd_result r = rc == SQLITE_ROW ? BD_OK : map_rc(rc);
    done(st);
    return r;
}

static bd_result sq_breach_list(bd_store *base, int limit, bd_breach_cb cb, void *ctx)
{
    sqlite_store *s = S(base);
    sqlite3_stmt *st = fixed(s, limit > 0 ? Q_BREACH_LIST_LIMIT : Q_BREACH_LIST);
    if (!st)
        return BD_ERR_STORE;
    if (limit > 0)
        sqlite3_bind_int(st, 1, limit);
    int rows;
    return each_breach(st, cb, ctx, &rows);
}

static bd_result sq_breach_get(bd_store *base, const char *uuid, bd_breach_cb cb, void *ctx)
{
    sqlite_store *s = S(base);
    sqlite3_stmt *st = fixed(s, Q_BREACH_GET);
    if (!st)
        return BD_ERR_STORE;
    sqlite3_bind_text(st, 1, uuid, -1, SQLITE_STATIC);
    int rows;
    bd_result r = each_breach(st, cb, ctx, &rows);
    return r == BD_OK && rows == 0 ? BD_ERR_NOT_FOUND : r;
}

static bd_result sq_breach_by_id(bd_store *base, int64_t id, bd_breach_cb cb, void *ctx)
{
    sqlite_store *s = S(base);
    sqlite3_stmt *st = fixed(s, Q_BREACH_BY_ID);
    if (!st)
        return BD_ERR_STORE;
    sqlite3_bind_int64(st, 1, id);
    int rows;
    bd_result r = each_breach(st, cb, ctx, &rows);
    return r == BD_OK && rows == 0 ? BD_ERR_NOT_FOUND : r;
}

/* Looks up a breach's row id and date. */
static bd_result breach_id(sqlite_store *s, const char *uuid, int64_t *id, int32_t *date)
{
    sqlite3_stmt *st = fixed(s, Q_BREACH_ID);
    if (!st)
        return BD_ERR_STORE;
    sqlite3_bind_text(st, 1, uuid, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    bd_result r = rc == SQLITE_ROW ? BD_OK : rc == SQLITE_DONE ? BD_ERR_NOT_FOUND : map_rc(rc);
    if (rc == SQLITE_ROW) {
        *id = sqlite3_column_int64(st, 0);
        *date = sqlite3_column_int(st, 1);
    }
    done(st);
    return r;
}

static bd_result sq_breach_exists(bd_store *base, const char *uuid, bool *exists)
{
    int64_t id;
    int32_t date;
    bd_result r = breach_id(S(base), uuid, &id, &date);
    *exists = r == BD_OK;
    return r == BD_ERR_NOT_FOUND ? BD_OK : r;
}

static bd_result sq_breach_refresh_count(bd_store *base, const char *uuid)
{
    sqlite_store *s = S(base);
    sqlite3_stmt *st = fixed(s, Q_BREACH_REFRESH);
    if (!st)
        return BD_ERR_STORE;
    sqlite3_bind_text(st, 1, uuid, -1, SQLITE_STATIC);
    return step_done(s, st);
}

/* ---- breach records ---------------------------------------------------------------- */

static bd_result sq_record_put(bd_store *base, const bd_record_in *r, bool *inserted)
{
    sqlite_store *s = S(base);
    *inserted = false;
    breach_slot *b =
        &s->breach_cache[bd_slice_hash(bd_slice_from(r->breach_uuid)) & (BREACH_CACHE - 1)];
    if (strcmp(b->uuid, r->breach_uuid) != 0) {
        b->uuid[0] = '\0';
        bd_result res = breach_id(s, r->breach_uuid, &b->id, &b->date);
        if (res != BD_OK)
            return res;
        memcpy(b->uuid, r->breach_uuid, sizeof b->uuid);
    }
    sqlite3_stmt *st = fixed(s, Q_RECORD_PUT);
    if (!st)
        return BD_ERR_STORE;
    sqlite3_bind_int64(st, 1, b->id);
    sqlite3_bind_int(st, 2, b->date);
    bind_slice(st, 3, r->user_name);
    bind_slice(st, 4, r->user_name_key);
    bind_slice(st, 5, r->first_name);
    bind_slice(st, 6, r->last_name);
    bind_slice(st, 7, r->email);
    bind_slice(st, 8, r->email_domain);
    bind_slice(st, 9, r->phone_number);
    bind_slice(st, 10, r->phone_key);
    bind_slice(st, 11, r->ip_address);
    bind_slice(st, 12, r->bitcoin_address);
    bind_slice(st, 13, r->password_masked);
    bind_blob(st, 14, r->password_hmac);
    bind_slice(st, 15, r->password_hash);
    bind_slice(st, 16, r->ssn_masked);
    bind_blob(st, 17, r->ssn_hmac);
    bind_slice(st, 18, r->other_attributes);
    sqlite3_bind_int(st, 19, (int)r->severity);
    sqlite3_bind_blob(st, 20, r->dedup, sizeof r->dedup, SQLITE_STATIC);
    bd_result res = step_done(s, st);
    *inserted = res == BD_OK && sqlite3_changes(s->db) > 0;
    if (!*inserted || !r->email_domain.ptr || s->bulk_records)
        return res;
    st = fixed(s, Q_DOMAIN_COUNT_ADD);
    if (!st)
        return BD_ERR_STORE;
    bind_slice(st, 1, r->email_domain);
    return step_done(s, st);
}

/* Column holding each field's lookup key, in bd_field order. */
static const char *const FIELD_COL[BD_FIELD_COUNT] = {
    "email",    "email_domain",  "phone_key",     "user_name_key",   "ip_address",
    "ssn_hmac", "password_hmac", "password_hash", "bitcoin_address",
};

/* The index over each field's lookup key (schema.c), ordered like a search page. */
static const char *const FIELD_INDEX[BD_FIELD_COUNT] = {
    "records_by_email",    "records_by_domain", "records_by_phone",
    "records_by_user",     "records_by_ip",     "records_by_ssn",
    "records_by_password", "records_by_hash",   "records_by_bitcoin",
};

static bool field_is_blob(bd_field f)
{
    return f == BD_FIELD_SSN || f == BD_FIELD_PASSWORD;
}

/* Writes the index choice and WHERE clause of q into s->sql; parameters are numbered in
 * the order bind_where binds them. The driving index is named, not left to the planner:
 * without statistics SQLite prefers the index that also gives the page order, which is the
 * wrong one when a large domain meets a rare password. */
static bd_result build_where(sqlite_store *s, const bd_record_query *q, bool with_position)
{
    bd_buf *b = &s->sql;
    bd_result r = bd_buf_printf(b, " INDEXED BY %s", FIELD_INDEX[q->plan - 1]);
    if (r == BD_OK)
        r = bd_buf_printf(b, " WHERE r.%s = ?", FIELD_COL[q->field]);
    for (int f = 0; f < BD_FIELD_COUNT && r == BD_OK; f++) {
        switch (q->filter[f].mode) {
        case BD_FILTER_NONE:
            break;
        case BD_FILTER_PRESENT:
            r = bd_buf_printf(b, " AND r.%s IS NOT NULL", FIELD_COL[f]);
            break;
        case BD_FILTER_ABSENT:
            r = bd_buf_printf(b, " AND r.%s IS NULL", FIELD_COL[f]);
            break;
        case BD_FILTER_EQUALS:
            r = bd_buf_printf(b, " AND r.%s = ?", FIELD_COL[f]);
            break;
        }
    }
    if (r == BD_OK && with_position && q->has_after)
        r = bd_buf_append_str(b, " AND (r.breach_date, r.id) < (?, ?)");
    return r;
}

static int bind_where(sqlite3_stmt *st, const bd_record_query *q, bool with_position)
{
    int i = 1;
    if (field_is_blob(q->field))
        bind_blob(st, i++, q->key);
    else
        bind_slice(st, i++, q->key);
    for (int f = 0; f < BD_FIELD_COUNT; f++) {
        if (q->filter[f].mode != BD_FILTER_EQUALS)
            continue;
        if (field_is_blob((bd_field)f))
            bind_blob(st, i++, q->filter[f].key);
        else
            bind_slice(st, i++, q->filter[f].key);
    }
    if (with_position && q->has_after) {
        sqlite3_bind_int(st, i++, q->after_date);
        sqlite3_bind_int64(st, i++, q->after_id);
    }
    return i;
}

/* Index entries of one key, counted up to a bound. */
static bd_result probe(sqlite_store *s, bd_field f, bd_slice key, int64_t *n)
{
    bd_buf_reset(&s->sql);
    bd_result r = bd_buf_printf(&s->sql,
                                "SELECT count(*) FROM (SELECT 1 FROM records INDEXED BY %s "
                                "WHERE %s = ?1 LIMIT 1001)",
                                FIELD_INDEX[f], FIELD_COL[f]);
    if (r != BD_OK)
        return r;
    sqlite3_stmt *st = dynamic(s, s->sql.data);
    if (!st)
        return BD_ERR_STORE;
    if (field_is_blob(f))
        bind_blob(st, 1, key);
    else
        bind_slice(st, 1, key);
    int rc = sqlite3_step(st);
    *n = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    r = rc == SQLITE_ROW ? BD_OK : map_rc(rc);
    done(st);
    return r;
}

/* Picks the index that drives q, once per query: the searched field's, or a filter value's
 * when a probe of at most a thousand entries finds it more selective. Noted in q->plan as
 * the field + 1. */
static bd_result plan_records(sqlite_store *s, bd_record_query *q)
{
    if (q->plan)
        return BD_OK;
    bd_field driver = q->field;
    bool any = false;
    for (int f = 0; f < BD_FIELD_COUNT; f++)
        any |= q->filter[f].mode == BD_FILTER_EQUALS;
    bd_result r = BD_OK;
    int64_t best = 0;
    if (any)
        r = probe(s, q->field, q->key, &best);
    for (int f = 0; any && f < BD_FIELD_COUNT && r == BD_OK; f++) {
        if (q->filter[f].mode != BD_FILTER_EQUALS)
            continue;
        int64_t n;
        r = probe(s, (bd_field)f, q->filter[f].key, &n);
        if (r == BD_OK && n < best) {
            best = n;
            driver = (bd_field)f;
        }
    }
    if (r == BD_OK)
        q->plan = (int)driver + 1;
    return r;
}

/* An email_domain search without filters: records_found is the domain's count. */
static bool count_domain(sqlite_store *s, const bd_record_query *q, int64_t *count, bd_result *r)
{
    if (q->field != BD_FIELD_EMAIL_DOMAIN)
        return false;
    for (int f = 0; f < BD_FIELD_COUNT; f++)
        if (q->filter[f].mode != BD_FILTER_NONE)
            return false;
    sqlite3_stmt *st = fixed(s, Q_DOMAIN_COUNT);
    if (!st) {
        *r = BD_ERR_STORE;
        return true;
    }
    bind_slice(st, 1, q->key);
    int rc = sqlite3_step(st);
    *count = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    *r = rc == SQLITE_ROW || rc == SQLITE_DONE ? BD_OK : map_rc(rc);
    done(st);
    return true;
}

static bd_result sq_record_count(bd_store *base, bd_record_query *q, int64_t *count)
{
    sqlite_store *s = S(base);
    bd_result counted;
    if (count_domain(s, q, count, &counted))
        return counted;
    bd_result r = plan_records(s, q);
    if (r != BD_OK)
        return r;
    bd_buf_reset(&s->sql);
    r = bd_buf_append_str(&s->sql, "SELECT count(*) FROM records r");
    if (r == BD_OK)
        r = build_where(s, q, false);
    if (r != BD_OK)
        return r;
    sqlite3_stmt *st = dynamic(s, s->sql.data);
    if (!st)
        return BD_ERR_STORE;
    bind_where(st, q, false);
    int rc = sqlite3_step(st);
    *count = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    r = rc == SQLITE_ROW ? BD_OK : map_rc(rc);
    done(st);
    return r;
}

static bd_result sq_record_find(bd_store *base, bd_record_query *q, bd_record_cb cb, void *ctx)
{
    sqlite_store *s = S(base);
    bd_result r = plan_records(s, q);
    if (r != BD_OK)
        return r;
    bd_buf_reset(&s->sql);
    r = bd_buf_append_str(
        &s->sql,
        "SELECT r.id, r.breach_date, r.user_name, r.first_name, r.last_name, r.email, "
        "r.email_domain, r.phone_number, r.ip_address, r.bitcoin_address, r.password_masked, "
        "r.password_hash, r.ssn_masked, r.other_attributes, r.severity, r.breach_id"
        " FROM records r");
    if (r == BD_OK)
        r = build_where(s, q, true);
    if (r == BD_OK)
        r = bd_buf_append_str(&s->sql, " ORDER BY r.breach_date DESC, r.id DESC LIMIT ?");
    if (r != BD_OK)
        return r;
    sqlite3_stmt *st = dynamic(s, s->sql.data);
    if (!st)
        return BD_ERR_STORE;
    int i = bind_where(st, q, true);
    sqlite3_bind_int(st, i, q->limit);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        bd_record_row row;
        row.id = sqlite3_column_int64(st, 0);
        row.breach_date = sqlite3_column_int(st, 1);
        row.user_name = col_slice(st, 2);
        row.first_name = col_slice(st, 3);
        row.last_name = col_slice(st, 4);
        row.email = col_slice(st, 5);
        row.email_domain = col_slice(st, 6);
        row.phone_number = col_slice(st, 7);
        row.ip_address = col_slice(st, 8);
        row.bitcoin_address = col_slice(st, 9);
        row.password_masked = col_slice(st, 10);
        row.password_hash = col_slice(st, 11);
        row.ssn_masked = col_slice(st, 12);
        row.other_attributes = col_slice(st, 13);
        row.severity = (bd_severity)sqlite3_column_int(st, 14);
        row.breach_id = sqlite3_column_int64(st, 15);
        if (cb(ctx, &row))
            break;
    }
    r = rc == SQLITE_ROW || rc == SQLITE_DONE ? BD_OK : map_rc(rc);
    done(st);
    return r;
}

/* ---- cards ------------------------------------------------------------------------- */

static void bind_text_opt(sqlite3_stmt *st, int i, const char *v)
{
    if (v[0])
        sqlite3_bind_text(st, i, v, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, i);
}

/* The FTS5 unicode61 tokenizer with the options cards_words was made with. */
static Fts5Tokenizer *word_tokenizer(sqlite_store *s)
{
    if (s->words)
        return s->words;
    fts5_api *api = NULL;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, "SELECT fts5(?1)", -1, &st, NULL) != SQLITE_OK)
        return NULL;
    sqlite3_bind_pointer(st, 1, (void *)&api, "fts5_api_ptr", NULL);
    sqlite3_step(st);
    sqlite3_finalize(st);
    void *ctx;
    const char *args[] = {"remove_diacritics", "2"};
    if (!api || api->xFindTokenizer(api, "unicode61", &ctx, &s->tokenizer) != SQLITE_OK ||
        s->tokenizer.xCreate(ctx, args, 2, &s->words) != SQLITE_OK)
        s->words = NULL;
    return s->words;
}

typedef struct {
    sqlite_store *s;
    const char *expire_date;
    int64_t id;
    bd_result r;
} owner_word_put;

static int put_owner_word(void *ctx, int flags, const char *token, int n, int start, int end)
{
    (void)flags, (void)start, (void)end;
    owner_word_put *w = ctx;
    sqlite3_stmt *st = fixed(w->s, Q_CARD_OWNER_WORD_PUT);
    if (!st) {
        w->r = BD_ERR_STORE;
        return SQLITE_ERROR;
    }
    sqlite3_bind_text(st, 1, token, n, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, w->expire_date, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 3, w->id);
    w->r = step_done(w->s, st);
    return w->r == BD_OK ? SQLITE_OK : SQLITE_ERROR;
}

/* Adds each word of a card's owner, with its expiry, to card_owner_words. */
static bd_result owner_words_put(sqlite_store *s, bd_slice owner, const char *expire_date,
                                 int64_t id)
{
    Fts5Tokenizer *t = word_tokenizer(s);
    if (!t)
        return BD_ERR_STORE;
    owner_word_put w = {s, expire_date, id, BD_OK};
    int rc = s->tokenizer.xTokenize(t, &w, FTS5_TOKENIZE_DOCUMENT, owner.ptr, (int)owner.len,
                                    put_owner_word);
    return w.r != BD_OK ? w.r : rc == SQLITE_OK ? BD_OK : BD_ERR_STORE;
}

static bd_result sq_card_put(bd_store *base, const bd_card_in *c, bool *inserted)
{
    sqlite_store *s = S(base);
    sqlite3_stmt *st = fixed(s, Q_CARD_PUT);
    if (!st)
        return BD_ERR_STORE;
    sqlite3_bind_text(st, 1, c->id, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, c->created_at, -1, SQLITE_STATIC);
    bind_slice(st, 3, c->bank);
    sqlite3_bind_text(st, 4, c->number_masked, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 5, c->bin, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 6, c->last4, -1, SQLITE_STATIC);
    char tail[5] = {c->last4[3], c->last4[2], c->last4[1], c->last4[0], '\0'};
    sqlite3_bind_text(st, 7, tail, 4, SQLITE_STATIC);
    sqlite3_bind_int(st, 8, c->length);
    sqlite3_bind_blob(st, 9, c->number_hmac, BD_HMAC_LEN, SQLITE_STATIC);
    bind_slice(st, 10, c->owner);
    bind_slice(st, 11, c->cvv);
    bind_text_opt(st, 12, c->expire_date);
    if (c->has_cvss)
        sqlite3_bind_double(st, 13, c->cvss);
    else
        sqlite3_bind_null(st, 13);
    bind_slice(st, 14, c->leak_id);
    bind_slice(st, 15, c->leak_name);
    bind_text_opt(st, 16, c->leak_publish_date);
    bind_text_opt(st, 17, c->leak_discover_date);
    if (c->leak_size >= 0)
        sqlite3_bind_int64(st, 18, c->leak_size);
    else
        sqlite3_bind_null(st, 18);
    bind_slice(st, 19, c->leak_tags);
    bd_result r = step_done(s, st);
    *inserted = r == BD_OK && sqlite3_changes(s->db) > 0;
    if (!*inserted)
        return r;
    int64_t rowid = sqlite3_last_insert_rowid(s->db);
    if (c->owner.ptr && c->expire_date[0])
        r = owner_words_put(s, c->owner, c->expire_date, rowid);
    if (r != BD_OK || s->bulk_cards)
        return r;
    for (int kind = 0; kind < 2 && r == BD_OK; kind++) {
        st = fixed(s, Q_CARD_COUNT_ADD);
        if (!st)
            return BD_ERR_STORE;
        sqlite3_bind_int(st, 1, kind);
        sqlite3_bind_text(st, 2, kind == 0 ? c->bin : tail, kind == 0 ? 6 : 4, SQLITE_STATIC);
        r = step_done(s, st);
    }
    if (r != BD_OK || (!c->owner.ptr && !c->bank.ptr))
        return r;
    st = fixed(s, Q_CARD_WORDS_PUT);
    if (!st)
        return BD_ERR_STORE;
    sqlite3_bind_int64(st, 1, rowid);
    bind_slice(st, 2, c->owner);
    bind_slice(st, 3, c->bank);
    return step_done(s, st);
}

static const char *const CARD_COL[] = {
    [BD_CARD_CREATED_AT] = "created_at",
    [BD_CARD_EXPIRE_DATE] = "expire_date",
    [BD_CARD_BANK] = "bank",
    [BD_CARD_OWNER] = "owner",
    [BD_CARD_CVSS] = "cvss",
    [BD_CARD_LEAK_NAME] = "leak_name",
    [BD_CARD_LEAK_PUBLISH_DATE] = "leak_publish_date",
    [BD_CARD_LEAK_DISCOVER_DATE] = "leak_discover_date",
    [BD_CARD_LEAK_SIZE] = "leak_size",
    [BD_CARD_CVV] = "cvv",
    [BD_CARD_LEAK_ID] = "leak_id",
};

static void emit(cond_sql *c, const char *text)
{
    if (c->err == BD_OK)
        c->err = bd_buf_append_str(c->sql, text);
}

static void bind_later(cond_sql *c, int type, const void *p, size_t len, int64_t n)
{
    if (c->nbinds == MAX_BINDS) {
        c->err = BD_ERR_LIMIT;
        return;
    }
    c->binds[c->nbinds++] = (bind_value){type, p, (int)len, n};
}

/* Keeps a string made for binding in c->text; returns its offset (the buffer may move, so
 * offsets are turned into pointers only when binding). */
static size_t keep_text(cond_sql *c, const char *a, size_t alen, const char *b)
{
    size_t at = c->text->len;
    if (c->err == BD_OK)
        c->err = bd_buf_append(c->text, a, alen);
    if (c->err == BD_OK && b)
        c->err = bd_buf_append_str(c->text, b);
    if (c->err == BD_OK)
        c->err = bd_buf_append_char(c->text, '\0');
    return at;
}

static void bind_kept(cond_sql *c, size_t at)
{
    bind_later(c, BIND_TEXT, (const void *)(uintptr_t)at, 0, -1);
}

/* Whether p (a bin or tail pattern) is plain digits, i.e. a prefix the counts table has. */
/* The cards table keeps the last four digits reversed, so that a pattern on the end of the
 * number is a prefix range, and every number has at least 12 digits. Writes the condition's
 * last4 in the tail column's order (when tail is not NULL) and returns the length bound
 * still worth checking (0: none). */
static int number_layout(const bd_card_cond *k, char tail[5])
{
    if (tail) {
        size_t n = strlen(k->last4);
        for (size_t i = 0; i < n; i++)
            tail[i] = k->last4[n - 1 - i];
        tail[n] = '\0';
    }
    return k->length > 0 || k->min_length <= 12 ? 0 : k->min_length;
}

static bool plain_digits(const char *p)
{
    for (; *p; p++)
        if (*p < '0' || *p > '9')
            return false;
    return true;
}

/* Writes to end the first string after every string that starts with the n plain digits
 * of p: p with its last digit raised by one ('9' + 1 is ':'). */
static void prefix_end(const char *p, size_t n, char *end)
{
    memcpy(end, p, n);
    end[n - 1]++;
    end[n] = '\0';
}

/* " AND col matches pattern" for a bin (full 6) or reversed-tail (full 4) pattern. A plain
 * digit prefix becomes a range: SQLite recompiles a statement whose GLOB pattern is a
 * bound parameter every time the value bound changes; a range or an equality plans once. */
static void digit_pattern(cond_sql *c, const char *col, const char *p, size_t n, size_t full)
{
    emit(c, " AND ");
    emit(c, col);
    bool digits = plain_digits(p);
    if (n == full) {
        emit(c, digits ? " = ?" : " GLOB ?");
        bind_kept(c, keep_text(c, p, n, NULL));
    } else if (digits) {
        char end[8];
        prefix_end(p, n, end);
        emit(c, " >= ? AND ");
        emit(c, col);
        emit(c, " < ?");
        bind_kept(c, keep_text(c, p, n, NULL));
        bind_kept(c, keep_text(c, end, n, NULL));
    } else {
        emit(c, " GLOB ?");
        bind_kept(c, keep_text(c, p, n, "*"));
    }
}

/* " AND <table>.<col> >= ?" and/or " AND ... <= ?" for the bounds of RANGE condition k. */
static void range_bounds(cond_sql *c, const char *table, const char *col, const bd_card_cond *k)
{
    if (k->low.ptr) {
        emit(c, " AND ");
        emit(c, table);
        emit(c, col);
        emit(c, k->low_inclusive ? " >= ?" : " > ?");
        bind_later(c, BIND_TEXT, k->low.ptr, k->low.len, 0);
    }
    if (k->high.ptr) {
        emit(c, " AND ");
        emit(c, table);
        emit(c, col);
        emit(c, k->high_inclusive ? " <= ?" : " < ?");
        bind_later(c, BIND_TEXT, k->high.ptr, k->high.len, 0);
    }
}

static void write_cond(cond_sql *c, const bd_card_cond *k, int depth)
{
    if (depth > 64) {
        c->err = BD_ERR_LIMIT;
        return;
    }
    switch (k->kind) {
    case BD_CC_ALL:
        emit(c, "1");
        break;
    case BD_CC_AND:
    case BD_CC_OR:
        emit(c, "(");
        for (size_t i = 0; i < k->nkids; i++) {
            if (i)
                emit(c, k->kind == BD_CC_AND ? " AND " : " OR ");
            write_cond(c, k->kids[i], depth + 1);
        }
        emit(c, ")");
        break;
    case BD_CC_NOT:
        /* A card with no value for the field is not matched by the inner condition (SQL
         * says NULL), so NOT must include it: coalesce the unknown to false first. */
        emit(c, "NOT coalesce(");
        write_cond(c, k->kids[0], depth + 1);
        emit(c, ", 0)");
        break;
    case BD_CC_NUMBER: {
        char tail[5];
        int min_length = number_layout(k, tail);
        size_t bl = strlen(k->bin), tl = strlen(tail);
        emit(c, "(1");
        if (bl == 6 && plain_digits(k->bin)) {
            /* equality, so the (bin, tail, length) index also serves the tail */
            emit(c, " AND c.bin = ?");
            bind_later(c, BIND_TEXT, k->bin, 6, 0);
        } else if (bl) {
            digit_pattern(c, "c.bin", k->bin, bl, 6);
        }
        if (tl)
            digit_pattern(c, "c.tail", tail, tl, 4);
        if (k->length) {
            emit(c, " AND c.length = ?");
            bind_later(c, BIND_INT, NULL, 0, k->length);
        }
        if (min_length) {
            emit(c, " AND c.length >= ?");
            bind_later(c, BIND_INT, NULL, 0, min_length);
        }
        emit(c, ")");
        break;
    }
    case BD_CC_HMAC:
        emit(c, "c.number_hmac = ?");
        bind_later(c, BIND_BLOB, k->hmac, BD_HMAC_LEN, 0);
        break;
    case BD_CC_EQUALS:
        emit(c, "c.");
        emit(c, CARD_COL[k->column]);
        emit(c, " = ?");
        bind_later(c, BIND_TEXT, k->value.ptr, k->value.len, 0);
        break;
    case BD_CC_WORDS: {
        /* An FTS5 query limited to one column: owner : "w1 w2" (a phrase), with a trailing
         * '*' for a prefix. Words hold no quotes, but any would be doubled. */
        size_t at = c->text->len;
        if (c->err == BD_OK)
            c->err = bd_buf_printf(c->text, "%s : \"", CARD_COL[k->column]);
        for (size_t i = 0; i < k->nwords && c->err == BD_OK; i++) {
            if (i)
                c->err = bd_buf_append_char(c->text, ' ');
            for (size_t j = 0; j < k->words[i].len && c->err == BD_OK; j++) {
                char ch = k->words[i].ptr[j];
                c->err = bd_buf_append(c->text, ch == '"' ? "\"\"" : &ch, ch == '"' ? 2 : 1);
            }
        }
        keep_text(c, k->prefix ? "\" *" : "\"", k->prefix ? 3 : 1, NULL);
        emit(c, "c.id IN (SELECT rowid FROM cards_words WHERE cards_words MATCH ?)");
        bind_kept(c, at);
        break;
    }
    case BD_CC_RANGE: {
        const char *col = CARD_COL[k->column];
        if (!k->low.ptr && !k->high.ptr) {
            emit(c, "c.");
            emit(c, col);
            emit(c, " IS NOT NULL");
            break;
        }
        emit(c, "(1");
        range_bounds(c, "c.", col, k);
        emit(c, ")");
        break;
    }
    }
}

static void bind_all(cond_sql *c, sqlite3_stmt *st, int first)
{
    for (size_t i = 0; i < c->nbinds; i++) {
        const bind_value *b = &c->binds[i];
        int at = first + (int)i;
        if (b->type == BIND_INT)
            sqlite3_bind_int64(st, at, b->n);
        else if (b->type == BIND_BLOB)
            sqlite3_bind_blob(st, at, b->ptr, b->len, SQLITE_STATIC);
        else if (b->n == -1) /* kept text: ptr holds an offset into c->text */
            sqlite3_bind_text(st, at, c->text->data + (uintptr_t)b->ptr, -1, SQLITE_STATIC);
        else
            sqlite3_bind_text(st, at, b->ptr, b->len, SQLITE_STATIC);
    }
}

/* Starts collecting SQL into s->sql and its bound values (and the strings made for them)
 * in c. */
static void cond_begin(sqlite_store *s, cond_sql *c)
{
    c->sql = &s->sql;
    c->text = &s->text;
    c->nbinds = 0;
    c->err = BD_OK;
    bd_buf_reset(&s->text);
}

/* Writes "... WHERE <cond>" for q into s->sql, collecting its bound values in c. */
static bd_result card_where(sqlite_store *s, const bd_card_query *q, cond_sql *c)
{
    cond_begin(s, c);
    emit(c, " WHERE ");
    write_cond(c, q->where, 0);
    return c->err;
}

/* Counts a lone prefix-only or suffix-only number pattern from card_counts. Returns false
 * when q is not of that shape (the caller then counts through the indexes). */
static bool count_from_summary(sqlite_store *s, const bd_card_query *q, int64_t *count,
                               bd_result *r)
{
    const bd_card_cond *k = q->where;
    char tail[5];
    if (k->kind != BD_CC_NUMBER || k->length || number_layout(k, tail))
        return false;
    bool has_bin = k->bin[0] != '\0', has_tail = tail[0] != '\0';
    if (has_bin == has_tail || !plain_digits(has_bin ? k->bin : tail))
        return false;
    sqlite3_stmt *st = fixed(s, Q_CARD_COUNT_SUM);
    if (!st) {
        *r = BD_ERR_STORE;
        return true;
    }
    const char *prefix = has_bin ? k->bin : tail;
    size_t n = strlen(prefix);
    char end[8];
    prefix_end(prefix, n, end);
    sqlite3_bind_int(st, 1, has_bin ? 0 : 1);
    sqlite3_bind_text(st, 2, prefix, (int)n, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, end, (int)n, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    *count = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    *r = rc == SQLITE_ROW ? BD_OK : map_rc(rc);
    done(st);
    return true;
}

/* Whether k tests nothing but owner or bank words and expiry ranges: the row id and the
 * expiry are all it reads, which the narrow cards_expiry_by_id index holds. */
static bool reads_only_id_and_expiry(const bd_card_cond *k, int depth)
{
    if (depth > 64)
        return false;
    switch (k->kind) {
    case BD_CC_WORDS:
        return true;
    case BD_CC_RANGE:
        return k->column == BD_CARD_EXPIRE_DATE;
    case BD_CC_AND:
    case BD_CC_OR:
    case BD_CC_NOT:
        for (size_t i = 0; i < k->nkids; i++)
            if (!reads_only_id_and_expiry(k->kids[i], depth + 1))
                return false;
        return true;
    default:
        return false;
    }
}

typedef struct {
    char word[256];
    int n, tokens;
} query_word;

static int take_query_word(void *ctx, int flags, const char *token, int n, int start, int end)
{
    (void)flags, (void)start, (void)end;
    query_word *w = ctx;
    if (w->tokens++ == 0 && n < (int)sizeof w->word) {
        memcpy(w->word, token, (size_t)n);
        w->n = n;
    }
    return SQLITE_OK;
}

/* Whether k is "owner:WORD AND expireDate:[...]": one whole owner word and expiry ranges,
 * all ANDed. Such a query is answered off card_owner_words, which holds only cards with an
 * expiry (a range never matches a card without one). On true, w holds the word as FTS5
 * reads it in a query (the plain case is one token). */
static bool owner_word_with_expiry(sqlite_store *s, const bd_card_cond *k, query_word *w)
{
    const bd_card_cond *word = NULL;
    size_t ranges = 0;
    if (k->kind != BD_CC_AND)
        return false;
    for (size_t i = 0; i < k->nkids; i++) {
        const bd_card_cond *kid = k->kids[i];
        if (kid->kind == BD_CC_WORDS && kid->column == BD_CARD_OWNER && kid->nwords == 1 &&
            !kid->prefix && !word)
            word = kid;
        else if (kid->kind == BD_CC_RANGE && kid->column == BD_CARD_EXPIRE_DATE)
            ranges++;
        else
            return false;
    }
    if (!word || !ranges)
        return false;
    Fts5Tokenizer *t = word_tokenizer(s);
    *w = (query_word){.n = -1};
    return t &&
           s->tokenizer.xTokenize(t, w, FTS5_TOKENIZE_QUERY, word->words[0].ptr,
                                  (int)word->words[0].len, take_query_word) == SQLITE_OK &&
           w->tokens == 1 && w->n >= 0;
}

/* " WHERE ..." over card_owner_words (as w) for a query owner_word_with_expiry accepted. */
static bd_result owner_word_where(sqlite_store *s, const bd_card_cond *k, const query_word *w,
                                  cond_sql *c)
{
    cond_begin(s, c);
    emit(c, " WHERE w.word = ?");
    bind_kept(c, keep_text(c, w->word, (size_t)w->n, NULL));
    for (size_t i = 0; i < k->nkids; i++)
        if (k->kids[i]->kind == BD_CC_RANGE)
            range_bounds(c, "w.", "expire_date", k->kids[i]);
    return c->err;
}

/* Counts an owner word within expiry ranges as one contiguous range of card_owner_words,
 * instead of testing the expiry of every card with the word. */
static bool count_from_owner_words(sqlite_store *s, const bd_card_query *q, int64_t *count,
                                   bd_result *r)
{
    query_word w;
    if (!owner_word_with_expiry(s, q->where, &w))
        return false;
    cond_sql *c = &s->cond;
    bd_buf_reset(&s->sql);
    *r = bd_buf_append_str(&s->sql, "SELECT count(*) FROM card_owner_words w");
    if (*r == BD_OK)
        *r = owner_word_where(s, q->where, &w, c);
    sqlite3_stmt *st = *r == BD_OK ? dynamic(s, s->sql.data) : NULL;
    if (!st) {
        if (*r == BD_OK)
            *r = BD_ERR_STORE;
        return true;
    }
    bind_all(c, st, 1);
    int rc = sqlite3_step(st);
    *count = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    *r = rc == SQLITE_ROW ? BD_OK : map_rc(rc);
    done(st);
    return true;
}

static bd_result sq_card_count(bd_store *base, const bd_card_query *q, int64_t *count)
{
    sqlite_store *s = S(base);
    bd_result summary;
    if (count_from_summary(s, q, count, &summary) || count_from_owner_words(s, q, count, &summary))
        return summary;
    cond_sql *c = &s->cond;
    bd_buf_reset(&s->sql);
    /* SQLite would look each word match up in the table by row id; the narrow index gives
     * the same answer from a fraction of the pages. */
    bd_result r = bd_buf_append_str(&s->sql, reads_only_id_and_expiry(q->where, 0)
                                                 ? "SELECT count(*) FROM cards c "
                                                   "INDEXED BY cards_expiry_by_id"
                                                 : "SELECT count(*) FROM cards c");
    if (r == BD_OK)
        r = card_where(s, q, c);
    if (r != BD_OK)
        return r;
    sqlite3_stmt *st = dynamic(s, s->sql.data);
    if (!st)
        return BD_ERR_STORE;
    bind_all(c, st, 1);
    int rc = sqlite3_step(st);
    *count = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    r = rc == SQLITE_ROW ? BD_OK : map_rc(rc);
    done(st);
    return r;
}

static int64_t count_of(sqlite_store *s, int q)
{
    sqlite3_stmt *st = fixed(s, q);
    int64_t n = -1;
    if (st && sqlite3_step(st) == SQLITE_ROW)
        n = sqlite3_column_int64(st, 0);
    if (st)
        done(st);
    return n;
}

/* The index to walk in page order instead of sorting the matches, or NULL. Walking meets a
 * match about every N/matches rows, so a page costs (offset+limit)*N/matches index steps;
 * sorting costs a table lookup per match plus matches*log(matches) comparisons, and a
 * lookup cost ~15 index steps when measured (owner word and expiry range, 300k cards: 745
 * matches sorted in 2.2 ms, 3,000 index steps walked in 0.6 ms). Walk when that is
 * cheaper: many matches, shallow page.
 * Without the choice SQLite picks the filter's index and sorts, e.g. all 50,000 cards of a
 * common BIN to return 20 of them. N is estimated by the largest rowid, an O(log N) read. */
static const char *sort_order_index(sqlite_store *s, const bd_card_query *q)
{
    if (q->nsort == 0 || q->matches <= 0)
        return NULL;
    /* One whole BIN in date order: its own index range is already the page order. */
    const bd_card_cond *k = q->where;
    if (q->nsort == 1 && q->sort[0].column == BD_CARD_CREATED_AT && k->kind == BD_CC_NUMBER &&
        strlen(k->bin) == 6 && plain_digits(k->bin) && !k->last4[0] && !k->length &&
        !number_layout(k, NULL))
        return "cards_by_bin_created";
    const char *index = q->sort[0].column == BD_CARD_CREATED_AT    ? "cards_by_created"
                        : q->sort[0].column == BD_CARD_EXPIRE_DATE ? "cards_by_expire"
                                                                   : NULL;
    if (!index)
        return NULL;
    int64_t n = count_of(s, Q_MAX_CARD);
    double depth = (double)(q->offset + q->limit);
    double m = (double)q->matches;
    double sort_cost = m * (16 + (m > 2 ? log2(m) : 1));
    return depth * (double)n / m < sort_cost ? index : NULL;
}

static bd_result sq_card_find(bd_store *base, const bd_card_query *q, bd_card_cb cb, void *ctx)
{
    sqlite_store *s = S(base);
    cond_sql *c = &s->cond;
    bd_buf_reset(&s->sql);
    bd_result r = bd_buf_append_str(
        &s->sql, "SELECT c.card_id, c.created_at, c.bank, c.number_masked, c.owner, c.cvv, "
                 "c.expire_date, c.cvss, c.leak_id, c.leak_name, c.leak_publish_date, "
                 "c.leak_discover_date, c.leak_size, c.leak_tags FROM ");
    /* An owner word in expiry order: card_owner_words is already in that order, so the page
     * reads the first matches of one index range (and sorts only cards of equal expiry by
     * id) instead of walking every card by expiry to test it against the word's matches. */
    query_word w;
    bool by_word = q->nsort && q->sort[0].column == BD_CARD_EXPIRE_DATE &&
                   owner_word_with_expiry(s, q->where, &w);
    if (by_word) {
        if (r == BD_OK)
            r = bd_buf_append_str(&s->sql, "card_owner_words w CROSS JOIN cards c ON c.id = w.id");
        if (r == BD_OK)
            r = owner_word_where(s, q->where, &w, c);
    } else {
        if (r == BD_OK)
            r = bd_buf_append_str(&s->sql, "cards c");
        const char *order_index = sort_order_index(s, q);
        if (r == BD_OK && order_index)
            r = bd_buf_printf(&s->sql, " INDEXED BY %s", order_index);
        if (r == BD_OK)
            r = card_where(s, q, c);
    }
    if (r != BD_OK)
        return r;
    bool first_desc = q->nsort ? q->sort[0].descending : true;
    emit(c, " ORDER BY ");
    for (size_t i = 0; i < q->nsort && i < BD_CARD_MAX_SORT; i++) {
        emit(c, by_word && i == 0 ? "w." : "c.");
        emit(c, CARD_COL[q->sort[i].column]);
        emit(c, q->sort[i].descending ? " DESC, " : " ASC, ");
    }
    emit(c, first_desc ? "c.card_id DESC LIMIT ? OFFSET ?" : "c.card_id ASC LIMIT ? OFFSET ?");
    if (c->err != BD_OK)
        return c->err;
    sqlite3_stmt *st = dynamic(s, s->sql.data);
    if (!st)
        return BD_ERR_STORE;
    bind_all(c, st, 1);
    sqlite3_bind_int(st, (int)c->nbinds + 1, q->limit);
    sqlite3_bind_int64(st, (int)c->nbinds + 2, q->offset);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        bd_card_row row;
        row.id = col_slice(st, 0);
        row.created_at = col_slice(st, 1);
        row.bank = col_slice(st, 2);
        row.number_masked = col_slice(st, 3);
        row.owner = col_slice(st, 4);
        row.cvv = col_slice(st, 5);
        row.expire_date = col_slice(st, 6);
        row.has_cvss = sqlite3_column_type(st, 7) != SQLITE_NULL;
        row.cvss = sqlite3_column_double(st, 7);
        row.leak_id = col_slice(st, 8);
        row.leak_name = col_slice(st, 9);
        row.leak_publish_date = col_slice(st, 10);
        row.leak_discover_date = col_slice(st, 11);
        row.has_leak_size = sqlite3_column_type(st, 12) != SQLITE_NULL;
        row.leak_size = sqlite3_column_int64(st, 12);
        row.leak_tags = col_slice(st, 13);
        if (cb(ctx, &row))
            break;
    }
    r = rc == SQLITE_ROW || rc == SQLITE_DONE ? BD_OK : map_rc(rc);
    done(st);
    return r;
}

/* ---- API keys ---------------------------------------------------------------------- */

static bd_result sq_key_add(bd_store *base, const bd_key_row *k, int64_t *id)
{
    sqlite_store *s = S(base);
    sqlite3_stmt *st = fixed(s, Q_KEY_ADD);
    if (!st)
        return BD_ERR_STORE;
    bind_slice(st, 1, k->name);
    sqlite3_bind_blob(st, 2, k->hash, sizeof k->hash, SQLITE_STATIC);
    bind_slice(st, 3, k->plan);
    sqlite3_bind_int64(st, 4, k->rate_per_hour);
    sqlite3_bind_int64(st, 5, k->created_at);
    sqlite3_bind_int64(st, 6, k->expires_at);
    sqlite3_bind_int64(st, 7, k->exact_per_day);
    bd_result r = step_done(s, st);
    if (r != BD_OK)
        return r;
    *id = sqlite3_last_insert_rowid(s->db);
    return run_fixed(s, Q_KEY_BUMP);
}

static bd_result sq_key_list(bd_store *base, bd_key_cb cb, void *ctx)
{
    sqlite_store *s = S(base);
    sqlite3_stmt *st = fixed(s, Q_KEY_LIST);
    if (!st)
        return BD_ERR_STORE;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        bd_key_row k;
        k.id = sqlite3_column_int64(st, 0);
        k.name = col_slice(st, 1);
        memset(k.hash, 0, sizeof k.hash);
        if (sqlite3_column_bytes(st, 2) == (int)sizeof k.hash)
            memcpy(k.hash, sqlite3_column_blob(st, 2), sizeof k.hash);
        k.plan = col_slice(st, 3);
        k.rate_per_hour = sqlite3_column_int64(st, 4);
        k.created_at = sqlite3_column_int64(st, 5);
        k.expires_at = sqlite3_column_int64(st, 6);
        k.revoked_at = sqlite3_column_int64(st, 7);
        k.exact_per_day = sqlite3_column_int64(st, 8);
        if (cb(ctx, &k))
            break;
    }
    bd_result r = rc == SQLITE_ROW || rc == SQLITE_DONE ? BD_OK : map_rc(rc);
    done(st);
    return r;
}

static bd_result sq_key_revoke(bd_store *base, int64_t id, int64_t now)
{
    sqlite_store *s = S(base);
    sqlite3_stmt *st = fixed(s, Q_KEY_REVOKE);
    if (!st)
        return BD_ERR_STORE;
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_int64(st, 2, now);
    bd_result r = step_done(s, st);
    if (r != BD_OK)
        return r;
    if (sqlite3_changes(s->db) == 0)
        return BD_ERR_NOT_FOUND;
    return run_fixed(s, Q_KEY_BUMP);
}

static bd_result sq_key_generation(bd_store *base, int64_t *gen)
{
    char v[32];
    bd_result r = sq_meta_get(base, "key_generation", v, sizeof v);
    if (r != BD_OK)
        return r;
    *gen = strtoll(v, NULL, 10);
    return BD_OK;
}

/* ---- statistics -------------------------------------------------------------------- */

static bd_result sq_stats(bd_store *base, bd_stats_cb cb, void *ctx, int64_t *total_records,
                          int64_t *total_cards)
{
    sqlite_store *s = S(base);
    sqlite3_stmt *st = fixed(s, Q_STATS);
    if (!st)
        return BD_ERR_STORE;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        bd_stats_row row = {col_slice(st, 0), col_slice(st, 1), sqlite3_column_int64(st, 2),
                            sqlite3_column_int64(st, 3)};
        if (cb(ctx, &row))
            break;
    }
    bd_result r = rc == SQLITE_ROW || rc == SQLITE_DONE ? BD_OK : map_rc(rc);
    done(st);
    *total_records = count_of(s, Q_COUNT_RECORDS);
    *total_cards = count_of(s, Q_COUNT_CARDS);
    return r;
}

/* ---- erasure and backup ------------------------------------------------------------ */

typedef struct {
    char (*uuids)[BD_UUID_LEN + 1];
    size_t n, cap;
} uuid_list;

/* Runs fixed statement q with text as its one parameter. */
static bd_result run_with_text(sqlite_store *s, int q, const char *text)
{
    sqlite3_stmt *st = fixed(s, q);
    if (!st)
        return BD_ERR_STORE;
    sqlite3_bind_text(st, 1, text, -1, SQLITE_STATIC);
    return step_done(s, st);
}

/* Erasure overwrites what it deletes (secure_delete, whatever the build's default), and drops
 * the per-domain counts it brought to zero: a domain of one person names that person. */
static const char ERASE_SETUP[] = "PRAGMA secure_delete=ON";
static const char ERASE_EMPTY_DOMAINS[] = "DELETE FROM domain_counts WHERE n <= 0";

static bd_result sq_erase_email(bd_store *base, const char *email, bd_stats_cb cb, void *ctx,
                                int64_t *removed)
{
    sqlite_store *s = S(base);
    *removed = 0;
    bd_result r = exec(s, ERASE_SETUP);
    if (r == BD_OK)
        r = sq_begin(&s->base);
    if (r != BD_OK)
        return r;
    uuid_list affected = {0};
    sqlite3_stmt *st = fixed(s, Q_ERASE_EMAIL_BREACHES);
    if (!st) {
        r = BD_ERR_STORE;
        goto out;
    }
    sqlite3_bind_text(st, 1, email, -1, SQLITE_STATIC);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        bd_stats_row row = {col_slice(st, 0), col_slice(st, 1), sqlite3_column_int64(st, 2), 0};
        if (affected.n == affected.cap) {
            size_t cap = affected.cap ? affected.cap * 2 : 16;
            void *p = realloc(affected.uuids, cap * sizeof *affected.uuids);
            if (!p) {
                rc = SQLITE_NOMEM;
                break;
            }
            affected.uuids = p;
            affected.cap = cap;
        }
        snprintf(affected.uuids[affected.n++], BD_UUID_LEN + 1, "%.*s", (int)row.uuid.len,
                 row.uuid.ptr);
        cb(ctx, &row);
    }
    r = rc == SQLITE_DONE ? BD_OK : map_rc(rc);
    done(st);
    if (r != BD_OK)
        goto out;
    r = run_with_text(s, Q_ERASE_EMAIL_DOMAINS, email);
    if (r != BD_OK)
        goto out;
    st = fixed(s, Q_ERASE_EMAIL);
    if (!st) {
        r = BD_ERR_STORE;
        goto out;
    }
    sqlite3_bind_text(st, 1, email, -1, SQLITE_STATIC);
    r = step_done(s, st);
    *removed = sqlite3_changes(s->db);
    for (size_t i = 0; i < affected.n && r == BD_OK; i++)
        r = sq_breach_refresh_count(&s->base, affected.uuids[i]);
    if (r == BD_OK)
        r = exec(s, ERASE_EMPTY_DOMAINS);
out:
    free(affected.uuids);
    if (r == BD_OK)
        r = sq_commit(&s->base);
    if (r != BD_OK) {
        sq_rollback(&s->base);
        *removed = 0;
    }
    return r;
}

static bd_result sq_erase_breach(bd_store *base, const char *uuid, int64_t *records_removed)
{
    sqlite_store *s = S(base);
    *records_removed = 0;
    bd_result r = exec(s, ERASE_SETUP);
    if (r == BD_OK)
        r = sq_begin(&s->base);
    if (r != BD_OK)
        return r;
    r = run_with_text(s, Q_ERASE_BREACH_DOMAINS, uuid);
    sqlite3_stmt *st = r == BD_OK ? fixed(s, Q_ERASE_BREACH_RECORDS) : NULL;
    if (!st) {
        sq_rollback(&s->base);
        return r == BD_OK ? BD_ERR_STORE : r;
    }
    sqlite3_bind_text(st, 1, uuid, -1, SQLITE_STATIC);
    r = step_done(s, st);
    int64_t n = sqlite3_changes(s->db);
    if (r == BD_OK && (st = fixed(s, Q_ERASE_BREACH)) != NULL) {
        sqlite3_bind_text(st, 1, uuid, -1, SQLITE_STATIC);
        r = step_done(s, st);
        if (r == BD_OK && sqlite3_changes(s->db) == 0)
            r = BD_ERR_NOT_FOUND;
        if (r == BD_OK)
            r = exec(s, ERASE_EMPTY_DOMAINS);
    } else if (r == BD_OK) {
        r = BD_ERR_STORE;
    }
    memset(s->breach_cache, 0, sizeof s->breach_cache); /* it may name the erased breach */
    if (r == BD_OK)
        r = sq_commit(&s->base);
    if (r != BD_OK) {
        sq_rollback(&s->base);
        return r;
    }
    *records_removed = n;
    return BD_OK;
}

/* After an erasure the deleted rows are gone from the main file (secure_delete) but the
 * write-ahead log still holds the pages that had them, until a checkpoint has copied every
 * frame and the log restarts. TRUNCATE waits for readers of older snapshots to move on: a
 * server shares a read view for 2 ms and gives up an idle one within a second, so retrying
 * in short waits gets through; each try waits at most 100 ms for them. */
static bd_result sq_truncate_log(bd_store *base, int64_t wait_ms)
{
    sqlite_store *s = S(base);
    int64_t deadline = monotonic_ns() + wait_ms * 1000000;
    int rc, log = -1;
    sqlite3_busy_timeout(s->db, 100);
    for (;;) {
        rc = sqlite3_wal_checkpoint_v2(s->db, "main", SQLITE_CHECKPOINT_TRUNCATE, &log, NULL);
        if ((rc == SQLITE_OK && log == 0) || (rc != SQLITE_OK && rc != SQLITE_BUSY) ||
            monotonic_ns() >= deadline)
            break;
        sqlite3_sleep(20);
    }
    sqlite3_busy_timeout(s->db, 10000);
    if (rc == SQLITE_OK && log != 0)
        rc = SQLITE_BUSY;
    return map_rc(rc);
}

/* true when a descriptor other than fd refers to fd's file: after SQLite opened a name, that
 * it opened the file the caller made, not one swapped in under the name meanwhile. */
static bool opened_elsewhere(int fd)
{
    struct stat want, st;
    if (fstat(fd, &want) != 0)
        return false;
    long max = sysconf(_SC_OPEN_MAX);
    if (max < 0 || max > 65536)
        max = 65536;
    for (int i = 0; i < max; i++) {
        if (i != fd && fstat(i, &st) == 0 && st.st_dev == want.st_dev && st.st_ino == want.st_ino)
            return true;
    }
    return false;
}

/* SQLite's online backup into the file the caller made, opened without following a link and
 * never created, and written only once it is known to be the caller's file. (VACUUM INTO would
 * open the name itself, following whatever link was put there.) One step holds one read view
 * of the source: a consistent copy while writers go on. No journal: a failed copy is thrown
 * away whole, and no side file is made by name. */
static bd_result sq_backup(bd_store *base, const char *dest, int dest_fd)
{
    sqlite_store *s = S(base);
    sqlite3 *d = NULL;
    if (sqlite3_open_v2(dest, &d, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW, NULL) !=
            SQLITE_OK ||
        !opened_elsewhere(dest_fd)) {
        sqlite3_close(d);
        return BD_ERR_IO; /* gone, a link, or another file now */
    }
    int rc = sqlite3_exec(d, "PRAGMA journal_mode=OFF", NULL, NULL, NULL);
    sqlite3_backup *b = rc == SQLITE_OK ? sqlite3_backup_init(d, "main", s->db, "main") : NULL;
    if (rc == SQLITE_OK && !b)
        rc = sqlite3_errcode(d);
    if (b) {
        for (int tries = 0; tries < 100; tries++) {
            rc = sqlite3_backup_step(b, -1);
            if (rc != SQLITE_BUSY && rc != SQLITE_LOCKED)
                break;
            sqlite3_sleep(100);
        }
        int done_rc = sqlite3_backup_finish(b);
        rc = rc == SQLITE_DONE ? done_rc : rc;
    }
    if (sqlite3_close(d) != SQLITE_OK && rc == SQLITE_OK)
        rc = SQLITE_IOERR;
    return map_rc(rc);
}

static const bd_store_ops sqlite_ops = {
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
    .ping = sq_ping,
    .breach_put = sq_breach_put,
    .breach_list = sq_breach_list,
    .breach_by_id = sq_breach_by_id,
    .breach_get = sq_breach_get,
    .breach_exists = sq_breach_exists,
    .breach_refresh_count = sq_breach_refresh_count,
    .record_put = sq_record_put,
    .record_count = sq_record_count,
    .record_find = sq_record_find,
    .card_put = sq_card_put,
    .card_count = sq_card_count,
    .card_find = sq_card_find,
    .key_add = sq_key_add,
    .key_list = sq_key_list,
    .key_revoke = sq_key_revoke,
    .key_generation = sq_key_generation,
    .erase_email = sq_erase_email,
    .erase_breach = sq_erase_breach,
    .truncate_log = sq_truncate_log,
    .backup = sq_backup,
    .stats = sq_stats,
};
