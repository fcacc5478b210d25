/* core/config: the configuration file's syntax, and the loader's file checks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/config.h"
#include "test.h"

static bd_result parse(const char *text, bd_config *c, unsigned *line, char *why)
{
    return bd_config_parse(text, strlen(text), c, line, why, 256);
}

TEST(entries_in_file_order)
{
    bd_config c;
    unsigned line;
    char why[256];
    const char *text = "# breachd.conf\n"
                       "\n"
                       "listen = 127.0.0.1:9000\n"
                       "   # an indented comment\n"
                       "cors-origin=https://a.example\r\n"
                       "\tcors-origin   =   https://b.example  \n"
                       "db = host=/run/postgresql dbname=breachd\n"
                       "threads = 4"; /* no newline at the end */
    CHECK_INT(parse(text, &c, &line, why), BD_OK);
    CHECK_INT(c.n, 5);
    CHECK_STR(c.v[0].key, "listen");
    CHECK_STR(c.v[0].value, "127.0.0.1:9000");
    CHECK_INT(c.v[0].line, 3);
    CHECK_STR(c.v[1].key, "cors-origin");
    CHECK_STR(c.v[1].value, "https://a.example");
    CHECK_INT(c.v[1].line, 5);
    CHECK_STR(c.v[2].value, "https://b.example");
    CHECK_INT(c.v[2].line, 6);
    CHECK_STR(c.v[3].key, "db"); /* only the first '=' splits */
    CHECK_STR(c.v[3].value, "host=/run/postgresql dbname=breachd");
    CHECK_STR(c.v[4].key, "threads");
    CHECK_STR(c.v[4].value, "4");
    CHECK_INT(c.v[4].line, 8);
    bd_config_free(&c);
    CHECK_INT(c.n, 0);
}

TEST(empty_and_comment_only)
{
    bd_config c;
    unsigned line;
    char why[256];
    CHECK_INT(parse("", &c, &line, why), BD_OK);
    CHECK_INT(c.n, 0);
    CHECK_INT(parse("#listen = x\n\n   \n#\n", &c, &line, why), BD_OK);
    CHECK_INT(c.n, 0);
    bd_config_free(&c);
}

TEST(refusals_name_their_line)
{
    static const struct {
        const char *text;
        unsigned line;
        const char *why;
    } cases[] = {
        {"listen 127.0.0.1:80\n", 1, "line 1: not a 'key = value' line"},
        {"# ok\nthreads = 2\n= 5\n", 3, "line 3: no key before '='"},
        {"\n\nListen = x\n", 3,
         "line 3: a key is lower-case letters, digits and '-', like a long option without its "
         "'--'"},
        {"--listen = x\n", 1,
         "line 1: a key is lower-case letters, digits and '-', like a long option without its "
         "'--'"},
        {"log_level = info\n", 1,
         "line 1: a key is lower-case letters, digits and '-', like a long option without its "
         "'--'"},
        {"threads =\n", 1,
         "line 1: no value after '=' (comment the line out to leave a setting unset)"},
        {"threads =   \t\n", 1,
         "line 1: no value after '=' (comment the line out to leave a setting unset)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        bd_config c;
        unsigned line = 99;
        char why[256] = "";
        CHECK_INT(parse(cases[i].text, &c, &line, why), BD_ERR_INVALID);
        CHECK_INT(line, cases[i].line);
        CHECK_STR(why, cases[i].why);
        CHECK_INT(c.n, 0);
    }
}

TEST(nul_and_size)
{
    bd_config c;
    unsigned line;
    char why[256];
    CHECK_INT(bd_config_parse("a = 1\nb = \0x\n", 12, &c, &line, why, sizeof why), BD_ERR_INVALID);
    CHECK_INT(line, 2);
    CHECK_STR(why, "line 2: holds a NUL byte");
    size_t big = BD_CONFIG_MAX_BYTES + 1;
    char *text = malloc(big);
    memset(text, '#', big);
    CHECK_INT(bd_config_parse(text, big, &c, &line, why, sizeof why), BD_ERR_INVALID);
    CHECK_INT(line, 0);
    CHECK_STR(why, "longer than 1048576 bytes");
    CHECK_INT(bd_config_parse(text, big - 1, &c, &line, why, sizeof why), BD_OK);
    free(text);
}

TEST(key_syntax)
{
    CHECK(bd_config_key_ok("max-connections-per-ip", 22));
    CHECK(bd_config_key_ok("a1", 2));
    CHECK(!bd_config_key_ok("1a", 2));
    CHECK(!bd_config_key_ok("-a", 2));
    CHECK(!bd_config_key_ok("", 0));
    char k[BD_CONFIG_KEY_MAX + 2];
    memset(k, 'a', sizeof k);
    CHECK(bd_config_key_ok(k, BD_CONFIG_KEY_MAX));
    CHECK(!bd_config_key_ok(k, BD_CONFIG_KEY_MAX + 1));
}

static char *write_file(const char *text, mode_t mode)
{
    static char path[64];
    snprintf(path, sizeof path, "/tmp/test_config_XXXXXX");
    int fd = mkstemp(path);
    if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
        abort();
    close(fd);
    chmod(path, mode);
    return path;
}

TEST(load_checks_the_file)
{
    bd_config c;
    unsigned mode;
    char why[512], want[512];
    char *path = write_file("listen = 127.0.0.1:1\nbad line\n", 0644);
    CHECK_INT(bd_config_load(path, &c, &mode, why, sizeof why), BD_ERR_INVALID);
    snprintf(want, sizeof want, "%s:2: not a 'key = value' line", path);
    CHECK_STR(why, want);
    unlink(path);

    path = write_file("listen = 127.0.0.1:1\n", 0640);
    CHECK_INT(bd_config_load(path, &c, &mode, why, sizeof why), BD_OK);
    CHECK_INT(mode & 0777, 0640);
    CHECK_INT(c.n, 1);
    bd_config_free(&c);
    chmod(path, 0646); /* writable by everyone: refused whatever it holds */
    CHECK_INT(bd_config_load(path, &c, &mode, why, sizeof why), BD_ERR_INVALID);
    snprintf(want, sizeof want, "%s: writable by every user (chmod o-w it)", path);
    CHECK_STR(why, want);
    unlink(path);

    CHECK_INT(bd_config_load(path, &c, &mode, why, sizeof why), BD_ERR_NOT_FOUND);
    snprintf(want, sizeof want, "%s: No such file or directory", path);
    CHECK_STR(why, want);
    CHECK_INT(bd_config_load("/tmp", &c, &mode, why, sizeof why), BD_ERR_INVALID);
    CHECK_STR(why, "/tmp: not a regular file");
}

int main(void)
{
    RUN(entries_in_file_order);
    RUN(empty_and_comment_only);
    RUN(refusals_name_their_line);
    RUN(nul_and_size);
    RUN(key_syntax);
    RUN(load_checks_the_file);
    return TEST_EXIT();
}
