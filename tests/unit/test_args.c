/* Store URIs on command lines: kept privately, overwritten in argv, or read from a file or
 * the environment instead. */
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/args.h"
#include "test.h"

/* A writable argument, as the kernel hands them to main. */
static char *arg(const char *text)
{
    static char pool[16][256];
    static int used;
    char *a = pool[used++ % 16];
    snprintf(a, 256, "%s", text);
    return a;
}

/* The n bytes of a, as /proc/PID/cmdline would show them. */
static bool bytes_are(const char *a, const char *want, size_t n)
{
    return memcmp(a, want, n) == 0;
}

TEST(test_a_db_password_is_overwritten_in_argv_and_kept_privately)
{
    const char *uri = "postgresql://u:s3cret@h/db";
    char *argv[] = {arg("--db"), arg(uri), arg("--name"), arg("x")};
    const char *db = NULL, *name = NULL;
    const bd_option opts[] = {{"--db", &db, NULL}, {"--name", &name, NULL}, {NULL, NULL, NULL}};
    CHECK(bd_parse_options("t", 4, argv, opts, NULL, 0, NULL));
    CHECK_STR(db, uri);
    CHECK_STR(name, "x");
    /* "postgresql://u@h/db" then NUL bytes over the rest: 26 bytes as before */
    CHECK(bytes_are(argv[1], "postgresql://u@h/db\0\0\0\0\0\0\0\0", 27));
}

TEST(test_the_equals_form_and_keyword_strings_are_overwritten_too)
{
    char *argv[] = {arg("--db=host=h password=pw dbname=d")};
    const char *db = NULL;
    const bd_option opts[] = {{"--db", &db, NULL}, {NULL, NULL, NULL}};
    CHECK(bd_parse_options("t", 1, argv, opts, NULL, 0, NULL));
    CHECK_STR(db, "host=h password=pw dbname=d");
    CHECK(bytes_are(argv[0], "--db=host=h dbname=d\0\0\0\0\0\0\0\0\0\0\0\0", 33));
}

TEST(test_a_file_path_is_left_as_it_is)
{
    char *argv[] = {arg("--db"), arg("/var/lib/breachd/store.db")};
    const char *db = NULL;
    const bd_option opts[] = {{"--db", &db, NULL}, {NULL, NULL, NULL}};
    CHECK(bd_parse_options("t", 2, argv, opts, NULL, 0, NULL));
    CHECK_STR(db, "/var/lib/breachd/store.db");
    CHECK_STR(argv[1], "/var/lib/breachd/store.db");
}

/* A file in the temporary directory holding text, with mode; its path. */
static const char *file_with(const char *text, mode_t mode)
{
    static char path[64];
    snprintf(path, sizeof path, "/tmp/bd-test-args-XXXXXX");
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
    close(fd);
    chmod(path, mode);
    return path;
}

TEST(test_a_uri_file_is_read_without_surrounding_space)
{
    char why[256] = "";
    const char *path = file_with("  postgresql://u:pw@h/db\r\n\n", 0600);
    char *uri = bd_uri_file_read("--db-file", path, why, sizeof why);
    CHECK_STR(uri, "postgresql://u:pw@h/db");
    free(uri);
    unlink(path);
    path = file_with("host=h\npassword=pw\n", 0400); /* a keyword string over lines */
    uri = bd_uri_file_read("--db-file", path, why, sizeof why);
    CHECK_STR(uri, "host=h\npassword=pw");
    free(uri);
    unlink(path);
}

TEST(test_a_uri_file_open_to_others_empty_or_missing_is_refused)
{
    char why[256], want[256];
    const char *path = file_with("postgresql://h/db", 0640);
    CHECK(!bd_uri_file_read("--db-file", path, why, sizeof why));
    snprintf(want, sizeof want, "--db-file: %s is open to other users (chmod 600 it)", path);
    CHECK_STR(why, want);
    unlink(path);
    path = file_with(" \n", 0600);
    CHECK(!bd_uri_file_read("--db-file", path, why, sizeof why));
    snprintf(want, sizeof want, "--db-file: %s holds no store URI", path);
    CHECK_STR(why, want);
    unlink(path);
    CHECK(!bd_uri_file_read("--x", "/nonexistent/bd", why, sizeof why));
    CHECK_STR(why, "--x: cannot read /nonexistent/bd: No such file or directory");
    CHECK(!bd_uri_file_read("--x", "/tmp", why, sizeof why));
    CHECK_STR(why, "--x: /tmp is not a regular file");
    char big[5000];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    path = file_with(big, 0600);
    CHECK(!bd_uri_file_read("--db-file", path, why, sizeof why));
    snprintf(want, sizeof want, "--db-file: %s is longer than 4096 bytes", path);
    CHECK_STR(why, want);
    unlink(path);
}

TEST(test_db_file_option_and_environment_give_the_uri)
{
    const char *path = file_with("postgresql://from-file/db\n", 0600);
    char *argv[] = {arg("--db-file"), arg(path)};
    const char *db = NULL;
    const bd_option opts[] = {{"--db", &db, NULL}, {NULL, NULL, NULL}};
    CHECK(bd_parse_options("t", 2, argv, opts, NULL, 0, NULL));
    CHECK_STR(db, "postgresql://from-file/db");
    unlink(path);

    setenv("BREACHD_DB", "postgresql://from-env/db", 1);
    db = NULL;
    CHECK(bd_parse_options("t", 0, argv, opts, NULL, 0, NULL));
    CHECK_STR(db, "postgresql://from-env/db");
    char *given[] = {arg("--db"), arg("/x.db")}; /* the command line wins */
    db = NULL;
    CHECK(bd_parse_options("t", 2, given, opts, NULL, 0, NULL));
    CHECK_STR(db, "/x.db");
    setenv("BREACHD_DB", "", 1); /* empty: as if unset */
    db = NULL;
    CHECK(bd_parse_options("t", 0, argv, opts, NULL, 0, NULL));
    CHECK(db == NULL);
    unsetenv("BREACHD_DB");
}

TEST(test_both_forms_or_a_missing_value_are_refused)
{
    const char *path = file_with("postgresql://h/db", 0600);
    char *argv[] = {arg("--db"), arg("/x.db"), arg("--db-file"), arg(path)};
    const char *db = NULL;
    const bd_option opts[] = {{"--db", &db, NULL}, {NULL, NULL, NULL}};
    CHECK(!bd_parse_options("t", 4, argv, opts, NULL, 0, NULL));
    unlink(path);
    char *alone[] = {arg("--db")};
    CHECK(!bd_parse_options("t", 1, alone, opts, NULL, 0, NULL));
    bd_uri_arg limits = {&BD_OPT_SHARED_LIMITS, NULL, NULL};
    char *other[] = {arg("--shared-limits-file")};
    int i = 0;
    CHECK_INT(bd_uri_arg_take(&limits, "t", 1, other, &i), -1);
    bd_uri_arg dbarg = {&BD_OPT_DB, NULL, NULL};
    char *unrelated[] = {arg("--dbx"), arg("--db-filex")};
    for (i = 0; i < 2; i++)
        CHECK_INT(bd_uri_arg_take(&dbarg, "t", 2, unrelated, &i), 0);
    CHECK(dbarg.value == NULL);
}

int main(void)
{
    RUN(test_a_db_password_is_overwritten_in_argv_and_kept_privately);
    RUN(test_the_equals_form_and_keyword_strings_are_overwritten_too);
    RUN(test_a_file_path_is_left_as_it_is);
    RUN(test_a_uri_file_is_read_without_surrounding_space);
    RUN(test_a_uri_file_open_to_others_empty_or_missing_is_refused);
    RUN(test_db_file_option_and_environment_give_the_uri);
    RUN(test_both_forms_or_a_missing_value_are_refused);
    return TEST_EXIT();
}
