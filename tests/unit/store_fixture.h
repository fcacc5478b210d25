/* What the store contract suites share (test_store_contract.c, test_card_contract.c): every
 * test runs against a SQLite store, a file in a temporary directory, then, when
 * BREACHD_TEST_PG_URI names a server, against a PostgreSQL store in a schema of its own,
 * made and dropped here through pg_admin.h's admin connection and reached through the
 * store URI's search_path option, so nothing else in the database is touched.
 *
 * A test gets new empty stores from fresh() and more handles on them from open_uri(); the
 * fixture closes every handle and removes every store once the test has run
 * (RUN_CONTRACT). The tests reach the stores through store.h alone. Include once, from one
 * test file. */
#ifndef BD_TESTS_STORE_FIXTURE_H
#define BD_TESTS_STORE_FIXTURE_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pg_admin.h"
#include "store/store.h"
#include "test.h"

typedef enum { FX_SQLITE, FX_POSTGRESQL } fx_backend;

static fx_backend backend; /* the half running now */

#define FX_STORES 4  /* stores one test may make */
#define FX_HANDLES 8 /* handles one test may hold open */

static char fx_dir[] = "/tmp/breachd-contract-XXXXXX";
static int fx_made; /* stores made in this run, for names of their own */
static struct {
    char name[128]; /* the SQLite file, or the PostgreSQL schema */
    char uri[1024];
} fx_store[FX_STORES];
static int fx_nstores;
static bd_store *fx_handle[FX_HANDLES];

/* Closes every handle the test still holds and removes its stores. */
static inline void fx_test_done(void)
{
    for (int i = 0; i < FX_HANDLES; i++) {
        bd_store_close(fx_handle[i]);
        fx_handle[i] = NULL;
    }
    for (int i = 0; i < fx_nstores; i++) {
        const char *name = fx_store[i].name;
        char side[192];
        if (backend == FX_SQLITE) {
            unlink(name);
            snprintf(side, sizeof side, "%.128s-wal", name);
            unlink(side);
            snprintf(side, sizeof side, "%.128s-shm", name);
            unlink(side);
            snprintf(side, sizeof side, "%.128s-webhooks.lock", name); /* a delivery's */
            unlink(side);
        } else {
            snprintf(side, sizeof side, "DROP SCHEMA IF EXISTS %.128s CASCADE", name);
            admin_sql(side);
        }
    }
    fx_nstores = 0;
}

/* Ends the run when the fixture itself cannot go on (no store can be made or opened). */
static inline void fx_bail(const char *what, const char *why)
{
    fprintf(stderr, "store fixture: %s: %s\n", what, why);
    fx_test_done();
    rmdir(fx_dir);
    exit(1);
}

/* A place for a new store where none exists yet, for the running test: a file name not yet
 * made (SQLite) or an empty schema (PostgreSQL). Returns its URI, valid until the test
 * ends. */
static inline const char *missing_store_uri(void)
{
    if (fx_nstores == FX_STORES)
        fx_bail("too many stores in one test", "raise FX_STORES");
    int i = fx_nstores++, n = ++fx_made;
    if (backend == FX_SQLITE) {
        snprintf(fx_store[i].name, sizeof fx_store[i].name, "%s/s%d.db", fx_dir, n);
        memcpy(fx_store[i].uri, fx_store[i].name, sizeof fx_store[i].name);
    } else {
        char sql[192], param[192];
        snprintf(fx_store[i].name, sizeof fx_store[i].name, "%s_%d", schema, n);
        snprintf(sql, sizeof sql, "CREATE SCHEMA %s", fx_store[i].name);
        admin_sql(sql);
        snprintf(param, sizeof param, "options=-csearch_path%%3D%s&application_name=bdcontract",
                 fx_store[i].name);
        uri_with(fx_store[i].uri, sizeof fx_store[i].uri, param);
    }
    return fx_store[i].uri;
}

/* Another handle on the store at uri, closed when the test ends; the run ends when it
 * cannot be opened. */
static inline bd_store *open_uri(const char *uri, int flags)
{
    int slot = 0;
    while (slot < FX_HANDLES && fx_handle[slot])
        slot++;
    if (slot == FX_HANDLES)
        fx_bail("too many handles in one test", "raise FX_HANDLES");
    char why[512] = "";
    bd_result r = bd_store_open(uri, flags, &fx_handle[slot], why, sizeof why);
    if (r != BD_OK)
        fx_bail(bd_result_str(r), why);
    return fx_handle[slot];
}

/* Closes a handle before the test ends (e.g. to open its store again). */
static inline void close_store(bd_store *s)
{
    for (int i = 0; i < FX_HANDLES; i++) {
        if (fx_handle[i] == s) {
            bd_store_close(s);
            fx_handle[i] = NULL;
        }
    }
}

/* The URI of the store fresh() made last. */
static inline const char *fresh_uri(void)
{
    return fx_store[fx_nstores - 1].uri;
}

/* A new empty store for the running test, open for writing. */
static inline bd_store *fresh(void)
{
    return open_uri(missing_store_uri(), BD_STORE_WRITE | BD_STORE_CREATE);
}

#define RUN_CONTRACT(name)                                                                         \
    do {                                                                                           \
        RUN(name);                                                                                 \
        fx_test_done();                                                                            \
    } while (0)

/* Runs suite against SQLite, then against PostgreSQL when a server is named. Returns the
 * exit status: non-zero when a test failed or a named server cannot be reached. */
static inline int fx_main(void (*suite)(void))
{
    setvbuf(stdout, NULL, _IOLBF, 0); /* lines in order with the failures on stderr */
    if (!mkdtemp(fx_dir)) {
        perror("mkdtemp");
        return 1;
    }
    printf("-- sqlite\n");
    backend = FX_SQLITE;
    suite();
    rmdir(fx_dir);
    printf("-- postgresql\n");
    int go = pg_fixture_connect("bdcontract");
    if (go > 0)
        return 1;
    if (go == 0) {
        backend = FX_POSTGRESQL;
        suite();
        PQfinish(admin);
    }
    return TEST_EXIT();
}

#endif
