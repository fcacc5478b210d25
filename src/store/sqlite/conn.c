/* The SQLite backend's connection: opening (file modes, pragmas, schema migrations) and
 * closing, and bulk loads. The meta table is meta.c's, transactions txn.c's, read views
 * and the liveness check views.c's, the operations table ops.c's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/private_file.h"
#include "store/sqlite/map_vfs.h"
#include "store/sqlite/schema.h"
#include "store/sql_common.h"
#include "store/sqlite/sqlite_impl.h"
#include "store/sqlite/statements.h"

/* SQLite decides every duplicate at its own put: none are left for the commit. */
int64_t sq_take_late_duplicates(bd_store *s)
{
    (void)s;
    return 0;
}

/* Searches name the index that drives them (records.c, cards.c): no statistics to refresh.
 * A load without the WAL (sq_bulk_begin) has committed: the store's usual mode again (a
 * no-op when the connection never left it; sq_rollback does the same). */
void sq_loaded(bd_store *base, bd_bulk_kind kind, int64_t rows)
{
    (void)kind;
    (void)rows;
    sq_exec(S(base), "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL");
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
        bd_result r = sq_exec(s, "BEGIN IMMEDIATE");
        if (r == BD_OK)
            r = sq_exec(s, bd_sqlite_migrations[v]);
        if (r == BD_OK)
            r = sq_migration_notes(s);
        if (r == BD_OK)
            r = sq_exec(s, pragma);
        if (r == BD_OK)
            r = sq_exec(s, "COMMIT");
        if (r != BD_OK) {
            sq_exec(s, "ROLLBACK");
            snprintf(why, whylen, "schema migration %d failed", v + 1);
            return r;
        }
    }
    return BD_OK;
}

void sq_close(bd_store *base)
{
    sqlite_store *s = S(base);
    sq_outbox_free(s);
    sq_words_side_end(s);
    sq_finalize_all(s);
    if (s->words)
        s->tokenizer.xDelete(s->words);
    sqlite3_close(s->db);
    bd_buf_free(&s->sql);
    bd_buf_free(&s->text);
    bd_range_acc_free(&s->ranges);
    sq_card_counts_free(s);
    sq_leak_tally_free(s);
    sq_dedup_forget(s);
    bd_buf_free(&s->range_blob);
    pthread_mutex_destroy(&s->read_lock);
    free(s);
}

/* Opens the file and sets the pragmas every connection has. */
static bd_result open_file(sqlite_store *s, const char *path, int flags, char *why, size_t whylen)
{
    int oflags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX;
    if (flags & BD_STORE_CREATE)
        oflags |= SQLITE_OPEN_CREATE;
    /* a reader maps the whole file (map_vfs.h), not SQLite's first 2 GB */
    const char *vfs = (flags & BD_STORE_WRITE) ? NULL : sq_map_vfs();
    int rc = sqlite3_open_v2(path, &s->db, oflags, vfs);
    if (rc != SQLITE_OK) {
        snprintf(why, whylen, "cannot open the store %s: %s", path,
                 s->db ? sqlite3_errmsg(s->db) : "out of memory");
        return rc == SQLITE_CANTOPEN ? BD_ERR_NOT_FOUND : sq_map_rc(rc);
    }
    sqlite3_busy_timeout(s->db, 10000);
    /* A new store gets 16 KiB pages: a quarter of the I/O calls of the 4 KiB default for
     * the same data, which is what bulk import and index range scans pay for. Only takes
     * effect before the first table exists. */
    if (flags & BD_STORE_CREATE)
        sq_exec(s, "PRAGMA page_size=16384");
    sqlite3_extended_result_codes(s->db, 0);
    /* WAL lets the server read while breachctl imports; NORMAL sync is durable at each
     * checkpoint and never corrupts, which is the trade-off WAL documents. */
    /* Readers read the store through a mapping, which shares the OS page cache: the
     * benchmark's profile of a card search on a 0.8 GB store spent 65% of its time in
     * pread(2) for pages past the former 256 MiB window. SQLite's own mapping stops at
     * 2 GiB (Debian's build); a reader's maps the whole file (map_vfs.h), and this size
     * only switches it on. */
    bd_result r =
        sq_exec(s, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=OFF;"
                   "PRAGMA cache_size=-65536; PRAGMA mmap_size=2147418112; "
                   "PRAGMA temp_store=MEMORY");
    if (r != BD_OK)
        snprintf(why, whylen, "%s is not a breachd store (or is locked)", path);
    return r;
}

/* Refuses a file that holds no store unless one is being created, and brings the schema to
 * this program's version: a writer always runs what is missing, a reader only when the
 * version differs (a newer store is refused). */
static bd_result check_schema(sqlite_store *s, const char *path, int flags, char *why,
                              size_t whylen)
{
    int v = schema_version(s);
    if (v == 0 && !(flags & BD_STORE_CREATE)) {
        snprintf(why, whylen, "%s holds no breachd store; run 'breachctl init --db %s'", path,
                 path);
        return BD_ERR_NOT_FOUND;
    }
    if ((flags & BD_STORE_WRITE) || v != bd_sqlite_migration_count)
        return migrate(s, why, whylen);
    return BD_OK;
}

/* A bulk writer's page cache: 672 MiB (allocated only as used). With the identity tally's
 * 192 MiB at most (ingest/tally.c), the importer's two windows of records (import.c) and
 * the reader's buffers an import stays within 1 GiB whatever the file's size: 10M records
 * --bulk peaked at 1.49 GB with a 1 GiB cache, 1.02 GB with 768 MiB, 0.89 GB with 640 MiB,
 * which spilled pages the load needed again (system time 10 -> 21 -> 32 s; bench/RESULTS.md,
 * "SQLite --bulk at 10M records"); the windows took 32 MB more, and 32 MiB less cache. A
 * plain load of 10M records peaked at 1,078-1,087 MiB with 736 MiB, 1,003 MiB with 672 (301 s
 * against 305; "The records' key built at the load's end"). A bulk load into an empty table
 * uses 256 MiB while its key is deferred (dedup_key.c). */
#define BULK_CACHE_KIB "688128"

/* The settings of the connection's role: a reader only reads; a writer loads in bulk. */
static void set_role(sqlite_store *s, int flags)
{
    if (!(flags & BD_STORE_WRITE)) {
        sq_exec(s, "PRAGMA query_only=1");
        return;
    }
    if (flags & BD_STORE_SMALL_WRITES)
        return; /* a reader's settings, writes allowed */
    /* bulk writers: fold the WAL back every 256 MiB, not every 4 MiB (each fsyncs);
     * a large page cache (allocated only as used) keeps the random-key index pages
     * of a few million records in memory, where import cost grows once they spill */
    sq_exec(s, "PRAGMA wal_autocheckpoint=16384; PRAGMA cache_size=-" BULK_CACHE_KIB "; "
               "PRAGMA mmap_size=0");
    /* Temporary data in files, not memory: SQLite's external merge sorter (and with it
     * PRAGMA threads) runs only then. With temp_store=MEMORY every CREATE INDEX sorted all
     * its keys as one list on one thread: the record indexes of 1M records took twice the
     * CPU they take sorted in runs (bench/RESULTS.md, import section). The runs go to
     * unlinked files in SQLITE_TMPDIR, which breachctl import points at the store's own
     * directory (docs/OPERATIONS.md: the temp space an import needs). */
    sq_exec(s, "PRAGMA temp_store=FILE");
    /* Index builds after a bulk load sort with helper threads, one per spare core. */
    char pragma[32];
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    snprintf(pragma, sizeof pragma, "PRAGMA threads=%ld",
             cores > 1 ? (cores < 8 ? cores - 1 : 7) : 0);
    sq_exec(s, pragma);
}

bd_result sq_connect(const char *path, int flags, const bd_store_ops *ops, bd_store **out,
                     char *why, size_t whylen)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, configure_sqlite);
    *out = NULL;
    if ((flags & BD_STORE_WRITE) && !(flags & BD_STORE_SMALL_WRITES) &&
        make_private(path, flags & BD_STORE_CREATE, why, whylen) != BD_OK)
        return BD_ERR_IO;
    sqlite_store *s = calloc(1, sizeof *s);
    if (!s)
        return BD_ERR_NOMEM;
    s->base.ops = ops;
    bd_buf_init(&s->sql, 16384);
    bd_buf_init(&s->text, 65536);
    bd_buf_init(&s->range_blob, SIZE_MAX / 2);
    bd_buf_init(&s->card_tally.keys, SIZE_MAX / 2);
    bd_buf_init(&s->leak_tally.keys, SIZE_MAX / 2);
    bd_range_acc_init(&s->ranges);
    sq_changes_forget(s);
    pthread_mutex_init(&s->read_lock, NULL);
    bd_result r = open_file(s, path, flags, why, whylen);
    if (r == BD_OK)
        r = check_schema(s, path, flags, why, whylen);
    if (r != BD_OK) {
        sq_close(&s->base);
        return r;
    }
    set_role(s, flags);
    *out = &s->base;
    return BD_OK;
}

static bd_result exec_sql(void *s, const char *sql)
{
    return sq_exec(s, sql);
}

/* While indexes are built: SQLite's sorter keeps runs of the page cache's size in memory
 * (at least 250 pages: 4 MiB with 16 KiB pages), so a small cache means many short runs,
 * each sorted while the next is read, merged from files by a helper thread. The record
 * indexes of 1M records took 2.7-3.4 s of CPU with 2 MiB, 4.2-5.8 with 8-16 MiB, 5.2-6.4
 * with temp_store=MEMORY (one list); bench/import_limits.py sweeps it again each run. */
#define SORT_CACHE_KIB 2048

int64_t sq_int_of(sqlite_store *s, const char *sql)
{
    sqlite3_stmt *st;
    int64_t v = -1;
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) == SQLITE_OK) {
        if (sqlite3_step(st) == SQLITE_ROW)
            v = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
    }
    return v;
}

int64_t sq_cache_set(sqlite_store *s, int64_t size)
{
    int64_t was = sq_int_of(s, "PRAGMA cache_size");
    char pragma[48];
    snprintf(pragma, sizeof pragma, "PRAGMA cache_size=%lld", (long long)size);
    sq_exec(s, pragma);
    return was;
}

int64_t sq_sort_memory_begin(sqlite_store *s)
{
    return sq_cache_set(s, -SORT_CACHE_KIB);
}

bd_result sq_sort_memory_end(sqlite_store *s, int64_t was)
{
    sq_cache_set(s, was);
    return BD_OK;
}

/* Runs sql that sorts (index builds, an INSERT in key order) with the sorter's memory set
 * for it. */
static bd_result sorted_exec(sqlite_store *s, const char *sql)
{
    int64_t was = sq_sort_memory_begin(s);
    bd_result r = sq_exec(s, sql);
    bd_result back = sq_sort_memory_end(s, was);
    return r != BD_OK ? r : back;
}

/* Drops every index the given DDL creates (schema.c's list: sql_common.h). */
static bd_result drop_indexes(sqlite_store *s, const char *ddl)
{
    return bd_sql_drop_indexes(ddl, exec_sql, s);
}

/* A load into an empty table needs no second copy of what it writes. Through the WAL every
 * page goes to the log at the commit and again into the store at the checkpoint; with a
 * rollback journal a page that did not exist when the transaction began is written once,
 * into the store, and the journal keeps only the original content of the few pages the load
 * changes (the schema, the first page): SQLite's own crash recovery, so a kill still rolls
 * the whole load back (the next program to open the store plays the journal back). Leaving
 * WAL is possible only when no other connection has the store open (SQLite refuses
 * otherwise, at once: no busy wait); a program that opens the store during such a load waits
 * for it (up to its busy timeout). Called inside the load's transaction, before it has
 * written anything: it ends that transaction and begins another. BD_OK either way; the WAL
 * stays when the table holds rows or another connection is open. */
static bd_result leave_wal_when_alone(bd_store *base, bd_bulk_kind kind)
{
    sqlite_store *s = S(base);
    if (sq_int_of(s, kind == BD_BULK_CARDS ? "SELECT EXISTS (SELECT 1 FROM cards)"
                                           : "SELECT EXISTS (SELECT 1 FROM records)") != 0)
        return BD_OK;
    bd_result r = sq_exec(s, "COMMIT");
    if (r != BD_OK)
        return r;
    sqlite3_busy_timeout(s->db, 0);
    sqlite3_stmt *st;
    bool left = false;
    if (sqlite3_prepare_v2(s->db, "PRAGMA journal_mode=DELETE", -1, &st, NULL) == SQLITE_OK) {
        if (sqlite3_step(st) == SQLITE_ROW) {
            const unsigned char *mode = sqlite3_column_text(st, 0);
            left = mode && strcmp((const char *)mode, "delete") == 0;
        }
        sqlite3_finalize(st);
    }
    sqlite3_busy_timeout(s->db, 10000);
    /* FULL: the journal is synced before the store is written, as rollback mode needs */
    if (left)
        sq_exec(s, "PRAGMA synchronous=FULL");
    /* between the two transactions, where SQLite allows an ATTACH; when it cannot be made,
     * the load makes its words itself. The transaction then must not lock the side file. */
    if (kind == BD_BULK_CARDS && sq_words_side_begin(s) == BD_OK)
        return sq_begin_main_only(base);
    return sq_begin(base);
}

/* A bulk card load's owner words (cards.c) go into this table in put order, and into
 * card_owner_words in key order at the load's end: put one by one, each word's row went to
 * a random place in that key, about 5 s of a 13 s load of 1M cards on the writer thread.
 * A temporary table (a file of its own under temp_store=FILE, rolled back with the load),
 * kept for the connection's life so that its prepared insert stays valid. */
static const char OWNER_WORDS_STAGE[] =
    "CREATE TEMP TABLE IF NOT EXISTS owner_words_staged(word TEXT NOT NULL, "
    "expire_date TEXT NOT NULL, card_id TEXT NOT NULL, id INTEGER NOT NULL)";
static const char OWNER_WORDS_LAND[] =
    "INSERT OR IGNORE INTO card_owner_words(word, expire_date, card_id, id) "
    "SELECT word, expire_date, card_id, id FROM temp.owner_words_staged ORDER BY 1, 2, 3;"
    "DELETE FROM temp.owner_words_staged";

/* The owner and bank word index built again from the cards. FTS5 keeps the terms it has
 * read in memory up to its 'hashsize' (1 MiB by default) and writes a segment each time it
 * is full, which it then merges with the others: 1M cards took 1.36 s in 4,707 pieces with
 * 1 MiB, 1.16 s with 8 MiB, 1.12 s in 2 with 64 MiB (sqlite3 shell, the same store). 16 MiB
 * for the rebuild, then FTS5's default again for the small writes of plain imports. */
#define CARD_WORDS_REBUILD                                                                         \
    SQ_CARD_WORDS_BULK_HASH                                                                        \
        "INSERT INTO cards_words(cards_words) VALUES ('rebuild');" SQ_CARD_WORDS_SMALL_HASH

bd_result sq_bulk_begin(bd_store *base, bd_bulk_kind kind)
{
    sqlite_store *s = S(base);
    if (sqlite3_get_autocommit(s->db))
        return BD_ERR_INVALID; /* only inside the load's own transaction */
    if (kind != BD_BULK_RANGES) {
        bd_result r = leave_wal_when_alone(base, kind);
        if (r != BD_OK)
            return r;
    }
    if (kind == BD_BULK_CARDS) {
        bd_result r = sq_exec(s, OWNER_WORDS_STAGE);
        if (r != BD_OK)
            return r;
        s->bulk_cards = true;
    } else
        s->bulk_records = true;
    if (kind == BD_BULK_CARDS)
        return drop_indexes(s, bd_sqlite_card_indexes);
    /* a table keyed by records_key has no records_by_breach to build again */
    s->bulk_record_indexes =
        sq_records_keyed(s) ? bd_sqlite_record_lookup_indexes : bd_sqlite_record_indexes;
    bd_result r = drop_indexes(s, s->bulk_record_indexes);
    return r == BD_OK ? sq_dedup_defer(s) : r;
}

bd_result sq_bulk_end(bd_store *base, bd_bulk_kind kind)
{
    sqlite_store *s = S(base);
    if (kind == BD_BULK_RECORDS) {
        s->bulk_records = false;
        bd_result r = sq_dedup_end(s);
        if (r == BD_OK)
            r = sorted_exec(s, s->bulk_record_indexes);
        return r == BD_OK ? sq_exec(s, bd_sqlite_domain_count_rebuild) : r;
    }
    s->bulk_cards = false;
    sq_card_counts_forget(s); /* recounted from the tables below */
    bd_result r = sorted_exec(s, OWNER_WORDS_LAND);
    sq_words_side_start(s); /* the word index on another core, beside the builds below */
    if (r == BD_OK)
        r = sorted_exec(s, bd_sqlite_card_indexes);
    bool landed = false;
    if (r == BD_OK)
        r = sq_words_side_land(s, &landed);
    if (r == BD_OK && !landed)
        r = sq_exec(s, CARD_WORDS_REBUILD);
    if (r == BD_OK)
        r = sq_exec(s, "DELETE FROM card_counts;"
                       "INSERT INTO card_counts(kind, key, n) "
                       "  SELECT 0, bin, count(*) FROM cards GROUP BY bin;"
                       "INSERT INTO card_counts(kind, key, n) "
                       "  SELECT 1, tail, count(*) FROM cards GROUP BY tail;");
    return r == BD_OK ? sq_exec(s, bd_sqlite_owner_word_count_rebuild) : r;
}
