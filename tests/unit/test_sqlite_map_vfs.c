/* The readers' whole-file mapping (store/sqlite/map_vfs.h): every page of the main file past
 * the first comes from the mapping whatever SQLite's own mmap_size cap, and the mapping
 * follows the file as another connection grows it and shrinks it. */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/sqlite/map_vfs.h"
#include "test.h"

static char dir[] = "/tmp/breachd-mapvfs-XXXXXX";
static char path[256];

static void exec(sqlite3 *db, const char *sql)
{
    char *err = NULL;
    int rc = sqlite3_exec(db, sql, NULL, NULL, &err);
    if (rc != SQLITE_OK)
        fprintf(stderr, "%s: %s\n", sql, err ? err : "?");
    sqlite3_free(err);
    CHECK_INT(rc, SQLITE_OK);
}

static int64_t one(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st = NULL;
    CHECK_INT(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
    CHECK_INT(sqlite3_step(st), SQLITE_ROW);
    int64_t v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

/* rows from..to-1 of 1,000 bytes each, committed and checkpointed into the main file */
static void add_rows(sqlite3 *w, int from, int to)
{
    char sql[256];
    snprintf(sql, sizeof sql,
             "WITH RECURSIVE n(i) AS (SELECT %d UNION ALL SELECT i + 1 FROM n WHERE i < %d) "
             "INSERT INTO t SELECT i, printf('%%01000d', i) FROM n",
             from, to - 1);
    exec(w, sql);
    exec(w, "PRAGMA wal_checkpoint(TRUNCATE)");
}

static sqlite3 *writer(void)
{
    static int n;
    snprintf(path, sizeof path, "%s/m%d.db", dir, n++);
    sqlite3 *w = NULL;
    CHECK_INT(sqlite3_open_v2(path, &w, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL),
              SQLITE_OK);
    exec(w, "PRAGMA page_size=4096; PRAGMA journal_mode=WAL; "
            "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)");
    return w;
}

/* A reader as the store opens one: through the VFS, query_only, with SQLite's own mapping
 * capped at 16 pages (so that a page the cap would leave to pread shows). */
static sqlite3 *reader(const char *mmap_size)
{
    const char *vfs = sq_map_vfs();
    CHECK(vfs != NULL);
    sqlite3 *r = NULL;
    CHECK_INT(sqlite3_open_v2(path, &r, SQLITE_OPEN_READWRITE, vfs), SQLITE_OK);
    char sql[128];
    snprintf(sql, sizeof sql, "PRAGMA query_only=1; PRAGMA cache_size=10; PRAGMA mmap_size=%s",
             mmap_size);
    exec(r, sql);
    return r;
}

/* The pages a full read of t took from the mapping and with xRead. */
static void full_read(sqlite3 *r, int rows, uint64_t *mapped, uint64_t *read)
{
    uint64_t m0, r0, m1, r1, made;
    sq_map_vfs_counts(&m0, &r0, &made);
    CHECK_INT(one(r, "SELECT count(*) FROM t"), rows);
    CHECK_INT(one(r, "SELECT sum(length(v)) FROM t"), (int64_t)rows * 1000);
    CHECK_INT(one(r, "SELECT max(id) FROM t"), rows - 1);
    sq_map_vfs_counts(&m1, &r1, &made);
    *mapped = m1 - m0;
    *read = r1 - r0;
}

TEST(test_map_vfs_takes_every_page_past_the_first_from_the_mapping)
{
    sqlite3 *w = writer();
    add_rows(w, 0, 2000); /* about 500 pages, 2 MB: 30 times the cap */
    int64_t pages = one(w, "PRAGMA page_count");
    CHECK(pages > 400);
    sqlite3 *r = reader("65536");
    uint64_t mapped, read;
    full_read(r, 2000, &mapped, &read);
    /* page 1 is always read (SQLite maps no page 1); every other one was mapped */
    CHECK(read <= 2);
    CHECK(mapped >= (uint64_t)pages - 1);
    sqlite3_close(r);
    sqlite3_close(w);
}

TEST(test_map_vfs_follows_the_file_as_another_connection_grows_and_shrinks_it)
{
    sqlite3 *w = writer();
    add_rows(w, 0, 500);
    sqlite3 *r = reader("65536");
    uint64_t mapped, read, made0, made, unused;
    full_read(r, 500, &mapped, &read);
    sq_map_vfs_counts(&unused, &unused, &made0);
    /* a commit that leaves the size as it was: the mapping is kept, not made again */
    exec(w, "UPDATE t SET v = upper(v) WHERE id = 7");
    exec(w, "PRAGMA wal_checkpoint(TRUNCATE)");
    full_read(r, 500, &mapped, &read);
    CHECK(read <= 2);
    /* grown to four times the size mapped: the pages past the old end are mapped too, by
     * the same mapping grown */
    add_rows(w, 500, 2000);
    full_read(r, 2000, &mapped, &read);
    CHECK(read <= 2);
    CHECK(mapped >= (uint64_t)one(w, "PRAGMA page_count") - 1);
    sq_map_vfs_counts(&unused, &unused, &made);
    CHECK_INT(made, made0);
    /* shrunk to a tenth: nothing past the new end is touched (that would be SIGBUS) */
    exec(w, "DELETE FROM t WHERE id >= 200");
    exec(w, "VACUUM");
    exec(w, "PRAGMA wal_checkpoint(TRUNCATE)");
    full_read(r, 200, &mapped, &read);
    CHECK(read <= 2);
    /* and grown again */
    add_rows(w, 200, 3000);
    full_read(r, 3000, &mapped, &read);
    CHECK(read <= 2);
    sqlite3_close(r);
    sqlite3_close(w);
}

TEST(test_map_vfs_maps_nothing_when_mmap_size_is_zero)
{
    sqlite3 *w = writer();
    add_rows(w, 0, 1000);
    sqlite3 *r = reader("0");
    uint64_t mapped, read;
    full_read(r, 1000, &mapped, &read);
    CHECK_INT(mapped, 0);
    CHECK(read > 100);
    sqlite3_close(r);
    sqlite3_close(w);
}

int main(void)
{
    CHECK(mkdtemp(dir) != NULL);
    RUN(test_map_vfs_takes_every_page_past_the_first_from_the_mapping);
    RUN(test_map_vfs_follows_the_file_as_another_connection_grows_and_shrinks_it);
    RUN(test_map_vfs_maps_nothing_when_mmap_size_is_zero);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return TEST_EXIT();
}
