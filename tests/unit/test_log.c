/* The process's log: text and JSON lines, escaping, signatures, level filtering. */
#include <fcntl.h>
#include <jansson.h>
#include <stdlib.h>
#include <unistd.h>

#include "core/log.h"
#include "test.h"

static int fds[2] = {-1, -1};
static char got[65536];

/* Everything logged since the last call (the pipe is drained without blocking). */
static const char *drain(void)
{
    ssize_t n = read(fds[0], got, sizeof got - 1);
    got[n > 0 ? n : 0] = '\0';
    return got;
}

static void reset(void)
{
    bd_log_set_program("breachd");
    bd_log_set_format(BD_LOG_TEXT);
    bd_log_set_level(BD_LOG_INFO);
    drain();
}

TEST(test_log_text_lines_are_signed_as_before)
{
    reset();
    bd_log(BD_LOG_INFO, "webhook", "removed %d delivered or failed alerts older than %d days", 1,
           30);
    CHECK_STR(drain(), "breachd: removed 1 delivered or failed alerts older than 30 days\n");
    bd_log_own(BD_LOG_ERROR, "store", "prepare failed: %s", "no such table: x");
    CHECK_STR(drain(), "store: prepare failed: no such table: x\n");
    bd_log_for_request(BD_LOG_ERROR, "http", "0123456789abcdef", "store error: %s", "busy");
    CHECK_STR(drain(), "request 0123456789abcdef: store error: busy\n");
    bd_log_set_program("breachctl");
    bd_log(BD_LOG_WARN, "ingest", "x");
    CHECK_STR(drain(), "breachctl: x\n");
}

TEST(test_log_ends_every_line_with_one_newline)
{
    reset();
    bd_log_own(BD_LOG_ERROR, "store", "commit failed: %s", "ERROR:  boom\n");
    CHECK_STR(drain(), "store: commit failed: ERROR:  boom\n");
    bd_log(BD_LOG_WARN, "http", "two\nlines\n"); /* text keeps inner newlines as they were */
    CHECK_STR(drain(), "breachd: two\nlines\n");
}

/* Parses one JSON line and checks its members; returns the message (static copy). */
static const char *json_message(const char *line, const char *level, const char *component,
                                const char *request_id)
{
    static char msg[8192];
    msg[0] = '\0';
    size_t len = strlen(line);
    CHECK(len > 0 && line[len - 1] == '\n');
    CHECK(memchr(line, '\n', len) == line + len - 1); /* one line */
    json_error_t err;
    json_t *o = json_loadb(line, len, 0, &err);
    CHECK(o && json_is_object(o));
    if (!o)
        return msg;
    const char *t = json_string_value(json_object_get(o, "time"));
    CHECK(t && strlen(t) == 24 && t[4] == '-' && t[10] == 'T' && t[19] == '.' && t[23] == 'Z');
    CHECK_STR(json_string_value(json_object_get(o, "level")), level);
    CHECK_STR(json_string_value(json_object_get(o, "component")), component);
    CHECK_STR(json_string_value(json_object_get(o, "request_id")), request_id);
    CHECK_INT(json_object_size(o), request_id ? 5 : 4);
    const char *m = json_string_value(json_object_get(o, "message"));
    CHECK(m != NULL);
    snprintf(msg, sizeof msg, "%s", m ? m : "");
    json_decref(o);
    return msg;
}

TEST(test_log_json_lines_carry_time_level_component_message)
{
    reset();
    bd_log_set_format(BD_LOG_JSON);
    bd_log(BD_LOG_INFO, "webhook", "alert %d of watch %d delivered (attempt %d)", 3, 2, 1);
    const char *line = drain();
    CHECK(strncmp(line, "{\"time\":\"", 9) == 0);
    CHECK(strstr(line, "\",\"level\":\"info\",\"component\":\"webhook\",\"message\":\"alert 3 of "
                       "watch 2 delivered (attempt 1)\"}\n") != NULL);
    CHECK_STR(json_message(line, "info", "webhook", NULL),
              "alert 3 of watch 2 delivered (attempt 1)");
    bd_log_own(BD_LOG_ERROR, "store", "prepare failed: %s\n", "x"); /* no signature in JSON */
    CHECK_STR(json_message(drain(), "error", "store", NULL), "prepare failed: x");
    bd_log_for_request(BD_LOG_WARN, "http", "00ff00ff00ff00ff", "store error: %s", "busy");
    CHECK_STR(json_message(drain(), "warn", "http", "00ff00ff00ff00ff"), "store error: busy");
}

TEST(test_log_json_escapes_quotes_controls_and_bad_utf8)
{
    reset();
    bd_log_set_format(BD_LOG_JSON);
    bd_log(BD_LOG_ERROR, "st\"ore", "a \"q\" \\ b\n\tc\x01 \xff d \xc3\xa9");
    const char *line = drain();
    CHECK(strstr(line, "\"component\":\"st\\\"ore\"") != NULL);
    CHECK(strstr(line,
                 "\"message\":\"a \\\"q\\\" \\\\ b\\n\\tc\\u0001 \xEF\xBF\xBD d \xc3\xa9\"}\n") !=
          NULL);
    CHECK_STR(json_message(line, "error", "st\"ore", NULL),
              "a \"q\" \\ b\n\tc\x01 \xEF\xBF\xBD d \xc3\xa9");
}

TEST(test_log_level_filters_lines_above_it)
{
    reset();
    bd_log(BD_LOG_DEBUG, "jobs", "hidden at info");
    CHECK_STR(drain(), "");
    CHECK(bd_log_enabled(BD_LOG_INFO) && !bd_log_enabled(BD_LOG_DEBUG));
    bd_log_set_level(BD_LOG_WARN);
    bd_log(BD_LOG_INFO, "jobs", "hidden at warn");
    bd_log(BD_LOG_WARN, "jobs", "shown");
    bd_log(BD_LOG_ERROR, "jobs", "shown too");
    CHECK_STR(drain(), "breachd: shown\nbreachd: shown too\n");
    bd_log_set_level(BD_LOG_DEBUG);
    bd_log(BD_LOG_DEBUG, "jobs", "now shown");
    CHECK_STR(drain(), "breachd: now shown\n");
    bd_log_set_level(BD_LOG_ERROR);
    bd_log_set_format(BD_LOG_JSON);
    bd_log(BD_LOG_WARN, "jobs", "hidden");
    CHECK_STR(drain(), "");
}

TEST(test_log_parses_level_and_format_names)
{
    bd_log_level l = BD_LOG_INFO;
    bd_log_format f = BD_LOG_TEXT;
    CHECK(bd_log_parse_level("error", &l) && l == BD_LOG_ERROR);
    CHECK(bd_log_parse_level("warn", &l) && l == BD_LOG_WARN);
    CHECK(bd_log_parse_level("info", &l) && l == BD_LOG_INFO);
    CHECK(bd_log_parse_level("debug", &l) && l == BD_LOG_DEBUG);
    CHECK(!bd_log_parse_level("INFO", &l) && !bd_log_parse_level("warning", &l) &&
          !bd_log_parse_level("", &l) && !bd_log_parse_level(NULL, &l));
    CHECK(bd_log_parse_format("json", &f) && f == BD_LOG_JSON);
    CHECK(bd_log_parse_format("text", &f) && f == BD_LOG_TEXT);
    CHECK(!bd_log_parse_format("JSON", &f) && !bd_log_parse_format(NULL, &f));
}

TEST(test_log_cuts_a_long_message_and_keeps_the_line_whole)
{
    reset();
    char *big = malloc(3 * BD_LOG_MESSAGE_MAX);
    memset(big, 'x', 3 * BD_LOG_MESSAGE_MAX - 1);
    big[3 * BD_LOG_MESSAGE_MAX - 1] = '\0';
    bd_log(BD_LOG_INFO, "http", "%s", big);
    const char *line = drain();
    CHECK_INT(strlen(line), strlen("breachd: ") + BD_LOG_MESSAGE_MAX - 1 + 1);
    CHECK(line[strlen(line) - 1] == '\n');
    bd_log_set_format(BD_LOG_JSON);
    memset(big, '"', 3 * BD_LOG_MESSAGE_MAX - 1); /* doubles when escaped: cut at an escape */
    bd_log(BD_LOG_INFO, "http", "%s", big);
    const char *m = json_message(drain(), "info", "http", NULL);
    CHECK(strlen(m) > 1000 && strlen(m) < BD_LOG_MESSAGE_MAX);
    free(big);
}

int main(void)
{
    if (pipe(fds) != 0)
        return 1;
    /* drain() must not block on an empty pipe */
    if (fcntl(fds[0], F_SETFL, O_NONBLOCK) != 0)
        return 1;
    bd_log_set_fd(fds[1]);
    RUN(test_log_text_lines_are_signed_as_before);
    RUN(test_log_ends_every_line_with_one_newline);
    RUN(test_log_json_lines_carry_time_level_component_message);
    RUN(test_log_json_escapes_quotes_controls_and_bad_utf8);
    RUN(test_log_level_filters_lines_above_it);
    RUN(test_log_parses_level_and_format_names);
    RUN(test_log_cuts_a_long_message_and_keeps_the_line_whole);
    return TEST_EXIT();
}
