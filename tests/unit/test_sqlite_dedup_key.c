/* The records' dedup key on SQLite as an index of its own (store/sqlite/dedup_key.c): made
 * so in new and never-loaded stores, left a column constraint in loaded ones, and deferred
 * by a bulk load into an empty table, which finds its own duplicates meanwhile. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>

#include "store/sqlite/schema.h"
#include "store/sqlite/sqlite_impl.h"
#include "store/store.h"
#include "test.h"

static char dir[] = "/tmp/breachd-dedup-XXXXXX";
static char path[256];

#define BREACH "11111111-1111-4111-8111-111111111111"

static bd_store *reopen(void)
{
    bd_store *s = NULL;
    char why[256];
    if (bd_store_open(path, BD_STORE_WRITE | BD_STORE_CREATE, &s, why, sizeof why) != BD_OK)
        fprintf(stderr, "%s\n", why);
    return s;
}

/* A new store holding one breach. */
static bd_store *fresh(void)
{
    static int n;
    snprintf(path, sizeof path, "%s/s%d.db", dir, n++);
    bd_store *s = reopen();
    bd_breach_in b = {.source_name = BD_SLICE_LIT("B"), .date_leaked = 20200101, .pwned_count = -1};
    memcpy(b.uuid, BREACH, BD_UUID_LEN + 1);
    bool ins;
    CHECK_INT(bd_store_breach_put(s, &b, &ins), BD_OK);
    return s;
}

/* Puts the record of content n; returns whether it went in. */
static bool put(bd_store *s, int n)
{
    bd_record_in r;
    memset(&r, 0, sizeof r);
    memcpy(r.breach_uuid, BREACH, BD_UUID_LEN + 1);
    char email[32];
    snprintf(email, sizeof email, "e%d@d.example", n);
    r.email = bd_slice_from(email);
    r.email_domain = BD_SLICE_LIT("d.example");
    r.severity = BD_SEVERITY_LOW;
    memcpy(r.dedup, &n, sizeof n);
    bool ins = false;
    CHECK_INT(bd_store_record_put(s, &r, &ins), BD_OK);
    return ins;
}

static bool deferred(bd_store *s)
{
    return ((sqlite_store *)s)->dedup_deferred;
}

/* The first column of the first row sql gives on the store file, as text ("" if none). */
static const char *text_of(const char *sql)
{
    static char out[2048];
    out[0] = '\0';
    sqlite3 *db;
    sqlite3_stmt *st;
    CHECK_INT(sqlite3_open(path, &db), SQLITE_OK);
    CHECK_INT(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
        snprintf(out, sizeof out, "%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    sqlite3_close(db);
    return out;
}

static void exec_raw(const char *sql)
{
    sqlite3 *db;
    CHECK_INT(sqlite3_open(path, &db), SQLITE_OK);
    char *err = NULL;
    int rc = sqlite3_exec(db, sql, NULL, NULL, &err);
    if (rc != SQLITE_OK)
        fprintf(stderr, "%s\n", err ? err : "?");
    CHECK_INT(rc, SQLITE_OK);
    sqlite3_free(err);
    sqlite3_close(db);
}

#define KEY_INDEXES "SELECT count(*) FROM sqlite_master WHERE name = 'records_key'"
#define BY_BREACH "SELECT count(*) FROM sqlite_master WHERE name = 'records_by_breach'"
#define RECORDS "SELECT count(*) FROM records"
#define TABLE_SQL "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'records'"

/* A bulk load through a live key (the table has rows: record 1): 1 is refused, 2 goes in
 * once. */
static void load_with_the_key_live(bd_store *s)
{
    CHECK_INT(bd_store_begin(s), BD_OK);
    CHECK_INT(bd_store_bulk_begin(s, BD_BULK_RECORDS), BD_OK);
    CHECK(!deferred(s));
    CHECK(!put(s, 1));
    CHECK(put(s, 2));
    CHECK(!put(s, 2));
    CHECK_INT(bd_store_bulk_end(s, BD_BULK_RECORDS), BD_OK);
    CHECK_INT(bd_store_commit(s), BD_OK);
}

TEST(test_sqlite_new_store_keys_records_by_an_index_of_its_own)
{
    bd_store *s = fresh();
    bd_store_close(s);
    CHECK_STR(text_of(KEY_INDEXES), "1");
    CHECK_STR(text_of(BY_BREACH), "0"); /* the key, led by breach_id, stands for it */
    CHECK(strstr(text_of(TABLE_SQL), "dedup BLOB NOT NULL,") != NULL);
    CHECK(strstr(text_of(TABLE_SQL), "UNIQUE") == NULL);
}

TEST(test_sqlite_bulk_load_into_an_empty_table_finds_its_own_duplicates)
{
    bd_store *s = fresh();
    CHECK_INT(bd_store_begin(s), BD_OK);
    CHECK_INT(bd_store_bulk_begin(s, BD_BULK_RECORDS), BD_OK);
    CHECK(deferred(s));
    CHECK(put(s, 1));
    CHECK(put(s, 2));
    CHECK(!put(s, 1));
    CHECK(put(s, 3));
    CHECK(!put(s, 2));
    CHECK_INT(bd_store_bulk_end(s, BD_BULK_RECORDS), BD_OK);
    CHECK(!deferred(s));
    CHECK_INT(bd_store_commit(s), BD_OK);
    CHECK_INT(bd_store_take_late_duplicates(s), 0);
    CHECK(!put(s, 3)); /* the key is live again */
    CHECK(put(s, 4));
    bd_store_close(s);
    CHECK_STR(text_of(RECORDS), "4");
    CHECK_STR(text_of(KEY_INDEXES), "1");
}

TEST(test_sqlite_bulk_load_past_its_set_builds_the_key_and_goes_on_with_it)
{
    size_t max = sq_load_keys_max;
    sq_load_keys_max = 2;
    bd_store *s = fresh();
    CHECK_INT(bd_store_begin(s), BD_OK);
    CHECK_INT(bd_store_bulk_begin(s, BD_BULK_RECORDS), BD_OK);
    CHECK(put(s, 1));
    CHECK(put(s, 2));
    CHECK(deferred(s));
    CHECK(put(s, 3)); /* one past the set: the key is built and 3 goes in through it */
    CHECK(!deferred(s));
    CHECK(!put(s, 1));
    CHECK(!put(s, 3));
    CHECK(put(s, 4));
    CHECK_INT(bd_store_bulk_end(s, BD_BULK_RECORDS), BD_OK);
    CHECK_INT(bd_store_commit(s), BD_OK);
    sq_load_keys_max = max;
    bd_store_close(s);
    CHECK_STR(text_of(RECORDS), "4");
    CHECK_STR(text_of(KEY_INDEXES), "1");
}

TEST(test_sqlite_bulk_load_into_a_table_with_rows_keeps_the_key_live)
{
    bd_store *s = fresh();
    CHECK(put(s, 1));
    load_with_the_key_live(s);
    bd_store_close(s);
    CHECK_STR(text_of(RECORDS), "2");
}

TEST(test_sqlite_a_deferred_load_rolled_back_leaves_the_key_live)
{
    bd_store *s = fresh();
    CHECK_INT(bd_store_begin(s), BD_OK);
    CHECK_INT(bd_store_bulk_begin(s, BD_BULK_RECORDS), BD_OK);
    CHECK(put(s, 1));
    bd_store_rollback(s);
    CHECK(!deferred(s));
    CHECK(put(s, 1));
    CHECK(!put(s, 1));
    bd_store_close(s);
    CHECK_STR(text_of(RECORDS), "1");
    CHECK_STR(text_of(KEY_INDEXES), "1");
}

/* The schema version just before the key's migration (the one that notes it pending): the
 * migrations from there on run again at the next open, later ones included. */
static int version_before_the_key(void)
{
    for (int i = 0; i < bd_sqlite_migration_count; i++)
        if (strstr(bd_sqlite_migrations[i], "'pending_records_dedup_index'"))
            return i;
    return -1;
}

/* Turns the store at path back into one made before the key's migration: the records table
 * keyed by its column, with its rows and indexes, the migration not run. */
static void as_before_the_migration(void)
{
    char table[2048], indexes[4096] = "", sql[8192];
    snprintf(table, sizeof table, "%s", text_of(TABLE_SQL));
    char *at = strstr(table, "dedup BLOB NOT NULL");
    CHECK(at != NULL);
    if (!at)
        return;
    char rest[1024];
    snprintf(rest, sizeof rest, "%s", at + strlen("dedup BLOB NOT NULL"));
    snprintf(at, sizeof table - (size_t)(at - table), "dedup BLOB NOT NULL UNIQUE%s", rest);
    sqlite3 *db;
    sqlite3_stmt *st;
    CHECK_INT(sqlite3_open(path, &db), SQLITE_OK);
    CHECK_INT(sqlite3_prepare_v2(db,
                                 "SELECT sql FROM sqlite_master WHERE type = 'index' AND "
                                 "tbl_name = 'records' AND name != 'records_key'",
                                 -1, &st, NULL),
              SQLITE_OK);
    while (sqlite3_step(st) == SQLITE_ROW) {
        size_t n = strlen(indexes);
        snprintf(indexes + n, sizeof indexes - n, "%s;", (const char *)sqlite3_column_text(st, 0));
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    snprintf(sql, sizeof sql,
             "ALTER TABLE records RENAME TO records_was; %s;"
             "INSERT INTO records SELECT * FROM records_was; DROP TABLE records_was;"
             "%s CREATE INDEX records_by_breach ON records(breach_id); PRAGMA user_version = %d;",
             table, indexes, version_before_the_key());
    exec_raw(sql);
    CHECK_STR(text_of(KEY_INDEXES), "0");
}

TEST(test_sqlite_upgrade_rebuilds_an_empty_records_table_and_leaves_a_loaded_one)
{
    bd_store *s = fresh();
    bd_store_close(s);
    as_before_the_migration();
    s = reopen();
    CHECK(s != NULL);
    bd_store_close(s);
    CHECK_STR(text_of(KEY_INDEXES), "1");
    CHECK_STR(text_of(BY_BREACH), "0");
    CHECK(strstr(text_of(TABLE_SQL), "UNIQUE") == NULL);

    s = fresh();
    CHECK(put(s, 1));
    bd_store_close(s);
    as_before_the_migration();
    s = reopen();
    CHECK(s != NULL);
    if (!s)
        return;
    CHECK_STR(text_of(KEY_INDEXES), "0");
    CHECK_STR(text_of(BY_BREACH), "1");
    CHECK(strstr(text_of(TABLE_SQL), "dedup BLOB NOT NULL UNIQUE") != NULL);
    load_with_the_key_live(s); /* a bulk load keeps that key live */
    bd_store_close(s);
    CHECK_STR(text_of(RECORDS), "2");
    CHECK_STR(text_of(BY_BREACH), "1"); /* built again by the load */
}

int main(void)
{
    if (!mkdtemp(dir))
        return 1;
    RUN(test_sqlite_new_store_keys_records_by_an_index_of_its_own);
    RUN(test_sqlite_bulk_load_into_an_empty_table_finds_its_own_duplicates);
    RUN(test_sqlite_bulk_load_past_its_set_builds_the_key_and_goes_on_with_it);
    RUN(test_sqlite_bulk_load_into_a_table_with_rows_keeps_the_key_live);
    RUN(test_sqlite_a_deferred_load_rolled_back_leaves_the_key_live);
    RUN(test_sqlite_upgrade_rebuilds_an_empty_records_table_and_leaves_a_loaded_one);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        return 1;
    return TEST_EXIT();
}
