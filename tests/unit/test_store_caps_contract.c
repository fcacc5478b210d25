/* What each backend says it offers (store.h: bd_store_caps), and that it does what it says:
 * the stated capabilities are known before a store is opened, are those of an open store of
 * that kind, and each one matches what the operations it names do. Runs on SQLite and, when
 * BREACHD_TEST_PG_URI names a server, on PostgreSQL (store_fixture.h). */
#include <fcntl.h>
#include <sys/stat.h>

#include "store_fixture.h"

/* The capabilities each backend states. */
static void expected(bd_store_caps *want)
{
    if (backend == FX_SQLITE)
        *want = (bd_store_caps){.database_server = false,
                                .online_backup = true,
                                .shared_rate_counters = false,
                                .write_ahead_log_file = true,
                                .log_file_suffix = "-wal"};
    else
        *want = (bd_store_caps){.database_server = true,
                                .online_backup = false,
                                .shared_rate_counters = true,
                                .write_ahead_log_file = false,
                                .log_file_suffix = NULL};
}

static void check_caps(const bd_store_caps *got, const bd_store_caps *want)
{
    CHECK_INT(got->database_server, want->database_server);
    CHECK_INT(got->online_backup, want->online_backup);
    CHECK_INT(got->shared_rate_counters, want->shared_rate_counters);
    CHECK_INT(got->write_ahead_log_file, want->write_ahead_log_file);
    CHECK_INT(got->log_file_suffix != NULL, want->log_file_suffix != NULL);
    if (got->log_file_suffix && want->log_file_suffix)
        CHECK_STR(got->log_file_suffix, want->log_file_suffix);
}

TEST(test_each_backend_states_its_capabilities_before_and_after_opening)
{
    bd_store_caps want, before, after;
    expected(&want);
    const char *uri = missing_store_uri();
    bd_store_kind_caps(uri, &before); /* nothing made yet */
    check_caps(&before, &want);
    bd_store *s = open_uri(uri, BD_STORE_WRITE | BD_STORE_CREATE);
    bd_store_capabilities(s, &after);
    check_caps(&after, &want);
}

TEST(test_a_database_server_has_no_default_secret_file)
{
    bd_store_caps caps;
    const char *uri = missing_store_uri();
    bd_store_kind_caps(uri, &caps);
    char path[1200];
    CHECK_INT(bd_store_default_secret_path(uri, path, sizeof path), !caps.database_server);
    if (!caps.database_server) {
        char want[1200];
        snprintf(want, sizeof want, "%s.secret", uri);
        CHECK_STR(path, want);
    }
}

TEST(test_shared_rate_counters_are_kept_only_where_stated)
{
    bd_store *s = fresh();
    bd_store_caps caps;
    bd_store_capabilities(s, &caps);
    int64_t granted = -1, tat = -1;
    bd_result r = bd_store_rate_take(s, 0, 0, 1000000, 10, 100, 1, &granted, &tat);
    CHECK_INT(r, caps.shared_rate_counters ? BD_OK : BD_ERR_INVALID);
    CHECK_INT(granted, caps.shared_rate_counters ? 1 : 0);
    CHECK_INT(bd_store_rate_give_back(s, 0, 0, 0, 10),
              caps.shared_rate_counters ? BD_OK : BD_ERR_INVALID);
}

TEST(test_an_online_backup_is_written_only_where_stated)
{
    bd_store *s = fresh();
    bd_store_caps caps;
    bd_store_capabilities(s, &caps);
    char dest[256];
    snprintf(dest, sizeof dest, "/tmp/breachd-caps-copy-%ld-%d.db", (long)getpid(), fx_made);
    int fd = open(dest, O_RDWR | O_CREAT | O_EXCL, 0600);
    CHECK(fd >= 0);
    if (fd < 0)
        return;
    CHECK_INT(bd_store_backup(s, dest, fd), caps.online_backup ? BD_OK : BD_ERR_INVALID);
    struct stat st;
    CHECK(fstat(fd, &st) == 0 && (st.st_size > 0) == caps.online_backup);
    close(fd);
    unlink(dest);
}

TEST(test_the_log_file_stated_is_the_one_truncate_log_empties)
{
    bd_store *s = fresh();
    bd_store_caps caps;
    bd_store_capabilities(s, &caps);
    CHECK_INT(bd_store_meta_set(s, "caps_test", "x"), BD_OK);
    if (caps.write_ahead_log_file) {
        char log[1200];
        snprintf(log, sizeof log, "%s%s", fresh_uri(), caps.log_file_suffix);
        struct stat st;
        CHECK(stat(log, &st) == 0 && st.st_size > 0); /* the write went to the log first */
        CHECK_INT(bd_store_truncate_log(s, 1000), BD_OK);
        CHECK(stat(log, &st) == 0 && st.st_size == 0);
    } else {
        CHECK_INT(bd_store_truncate_log(s, 1000), BD_OK); /* nothing to empty */
    }
}

static void suite(void)
{
    RUN_CONTRACT(test_each_backend_states_its_capabilities_before_and_after_opening);
    RUN_CONTRACT(test_a_database_server_has_no_default_secret_file);
    RUN_CONTRACT(test_shared_rate_counters_are_kept_only_where_stated);
    RUN_CONTRACT(test_an_online_backup_is_written_only_where_stated);
    RUN_CONTRACT(test_the_log_file_stated_is_the_one_truncate_log_empties);
}

int main(void)
{
    return fx_main(suite);
}
