/* The records' dedup key on SQLite: a unique index of its own, records_key (breach_id,
 * dedup), where the initial schema made it a column constraint (which only a rebuild of the
 * table can drop) beside an index by breach, records_by_breach, that the key now stands for.
 *
 * Why: with the key live, a bulk load inserts every record's 16-byte key at a random place
 * of a B-tree as large as the table's keys (450 MB at 10M records), a descent each and, past
 * the page cache, pages read back from the file; it was 28% of the rows phase at 1M. A load
 * into an empty records table now drops the key with the search indexes and builds it by
 * sorting once at its end, as it builds them. Only the load's own rows can then repeat each
 * other, and it finds those in memory: each record's key (16 bytes) it put, in a set of at
 * most sq_load_keys_max keys (256 MiB); a record whose key is there is a duplicate and is not
 * put, as the live key would have refused it. A load past that many records builds the key
 * there and then (its rows are unique so far) and goes on with it live. */
#include <string.h>

#include "core/key128set.h"
#include "core/log.h"
#include "store/sqlite/schema.h"
#include "store/sqlite/sqlite_impl.h"
#include "store/sqlite/statements.h"

/* Led by the breach: the same index answers a breach's records (its count, its erasure),
 * which records_by_breach answered beside the column key. A record's dedup hash covers its
 * breach, so (breach_id, dedup) is unique where dedup is. */
#define DEDUP_INDEX "CREATE UNIQUE INDEX records_key ON records(breach_id, dedup)"
#define PENDING "pending_records_dedup_index"

/* 2^24 slots of 16 bytes, three quarters full at most */
size_t sq_load_keys_max = (size_t)3 << 22;

/* The page cache while the key is deferred: nothing the load reads back at random is left
 * but the Pwned Passwords buckets it merges into, so the bulk writer's 672 MiB (conn.c),
 * which kept the key's pages in memory, gives room to the set. */
#define DEFERRED_CACHE_KIB 262144

bool sq_records_keyed(sqlite_store *s)
{
    return sq_int_of(s, "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'index' "
                        "AND name = 'records_key')") == 1;
}

static bool records_empty(sqlite_store *s)
{
    return sq_int_of(s, "SELECT NOT EXISTS (SELECT 1 FROM records)") == 1;
}

/* The table's own definition with the key's column constraint taken out, in buf; false
 * when it has none (already rebuilt) or cannot be read. */
static bool table_without_key(sqlite_store *s, bd_buf *buf)
{
    static const char keyed[] = "dedup BLOB NOT NULL UNIQUE";
    sqlite3_stmt *st;
    bool made = false;
    if (sqlite3_prepare_v2(s->db,
                           "SELECT sql FROM sqlite_master WHERE type = 'table' "
                           "AND name = 'records'",
                           -1, &st, NULL) != SQLITE_OK)
        return false;
    const char *sql =
        sqlite3_step(st) == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 0) : NULL;
    const char *at = sql ? strstr(sql, keyed) : NULL;
    if (at) {
        size_t kept = sizeof keyed - 1 - strlen(" UNIQUE");
        bd_buf_reset(buf);
        made = bd_buf_append(buf, sql, (size_t)(at - sql) + kept) == BD_OK &&
               bd_buf_append_str(buf, at + sizeof keyed - 1) == BD_OK;
    }
    sqlite3_finalize(st);
    return made;
}

/* The migration's work, in its transaction: a records table that holds no row is made
 * again with the key as its own index (new stores, and stores never loaded). A table with
 * rows keeps its column key, which a bulk load then keeps live as before: rebuilding it
 * would copy every record and leave the old pages free in the file. */
bd_result sq_dedup_key_note(sqlite_store *s)
{
    char v[8];
    bd_result r = sq_meta_get(&s->base, PENDING, v, sizeof v);
    if (r == BD_ERR_NOT_FOUND || (r == BD_OK && strcmp(v, "1") != 0))
        return BD_OK;
    if (r == BD_OK && !sq_records_keyed(s) && records_empty(s) && table_without_key(s, &s->sql)) {
        r = sq_exec(s, "DROP TABLE records");
        if (r == BD_OK)
            r = sq_exec(s, s->sql.data);
        if (r == BD_OK)
            r = sq_exec(s, bd_sqlite_record_lookup_indexes);
        if (r == BD_OK)
            r = sq_exec(s, DEDUP_INDEX);
    }
    return r == BD_OK ? sq_meta_set(&s->base, PENDING, "0") : r;
}

bd_result sq_dedup_defer(sqlite_store *s)
{
    if (!sq_records_keyed(s) || !records_empty(s))
        return BD_OK;
    bd_result r = sq_exec(s, "DROP INDEX records_key");
    if (r != BD_OK)
        return r;
    bd_key128set_init(&s->load_keys, sq_load_keys_max);
    s->dedup_deferred = true;
    s->cache_before_defer = sq_cache_set(s, -DEFERRED_CACHE_KIB);
    return BD_OK;
}

/* The key built over what is in the table, with the sorter's memory (conn.c). */
static bd_result build_key(sqlite_store *s)
{
    sq_dedup_forget(s);
    int64_t was = sq_sort_memory_begin(s);
    bd_result r = sq_exec(s, DEDUP_INDEX);
    bd_result back = sq_sort_memory_end(s, was);
    return r != BD_OK ? r : back;
}

void sq_record_hint(bd_store *base, const bd_record_in *r)
{
    sqlite_store *s = S(base);
    if (s->dedup_deferred)
        bd_key128set_prefetch(&s->load_keys, r->dedup);
}

bd_result sq_dedup_seen(sqlite_store *s, const uint8_t dedup[16], bool *seen)
{
    *seen = false;
    int added = bd_key128set_add(&s->load_keys, dedup);
    if (added >= 0) {
        *seen = added == 0;
        return BD_OK;
    }
    bd_log(BD_LOG_INFO, "store",
           "bulk load: past %zu records, the records' key is built now "
           "and kept live for the rest of the load",
           s->load_keys.used);
    return build_key(s); /* the put goes on with the key live */
}

bd_result sq_dedup_end(sqlite_store *s)
{
    return s->dedup_deferred ? build_key(s) : BD_OK;
}

void sq_dedup_forget(sqlite_store *s)
{
    if (s->dedup_deferred)
        sq_cache_set(s, s->cache_before_defer);
    s->dedup_deferred = false;
    bd_key128set_free(&s->load_keys);
}
