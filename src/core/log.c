/* The process's log: text or JSON lines, one write(2) each. */
#include "core/log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/json.h"

#define LINE_MAX_BYTES 8192 /* a whole line: the message, escaped, and its frame */

static _Atomic(const char *) program = "breachd";
static atomic_int format = BD_LOG_TEXT;
static atomic_int max_level = BD_LOG_INFO;
static atomic_int out_fd = 2;

static const char *const LEVEL_NAMES[] = {"error", "warn", "info", "debug"};

void bd_log_set_program(const char *name)
{
    atomic_store(&program, name);
}

void bd_log_set_format(bd_log_format f)
{
    atomic_store(&format, (int)f);
}

void bd_log_set_level(bd_log_level level)
{
    atomic_store(&max_level, (int)level);
}

void bd_log_set_fd(int fd)
{
    atomic_store(&out_fd, fd);
}

bool bd_log_parse_level(const char *s, bd_log_level *out)
{
    for (int i = BD_LOG_ERROR; i <= BD_LOG_DEBUG; i++)
        if (s && strcmp(s, LEVEL_NAMES[i]) == 0) {
            *out = (bd_log_level)i;
            return true;
        }
    return false;
}

bool bd_log_parse_format(const char *s, bd_log_format *out)
{
    if (s && strcmp(s, "text") == 0)
        *out = BD_LOG_TEXT;
    else if (s && strcmp(s, "json") == 0)
        *out = BD_LOG_JSON;
    else
        return false;
    return true;
}

bool bd_log_enabled(bd_log_level level)
{
    return (int)level <= atomic_load_explicit(&max_level, memory_order_relaxed);
}

/* A log write that fails (a closed or full stderr) is dropped: logging never stops work. */
static void write_all(const char *p, size_t len)
{
    int fd = atomic_load_explicit(&out_fd, memory_order_relaxed);
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return;
        p += n;
        len -= (size_t)n;
    }
}

/* The message's length without one trailing newline. */
static size_t chomp(const char *msg, int n, size_t cap)
{
    size_t len = n < 0 ? 0 : (size_t)n < cap ? (size_t)n : cap - 1; /* vsnprintf cut it */
    if (len > 0 && msg[len - 1] == '\n')
        len--;
    return len;
}

static void text_line(const char *signature, const char *request_id, const char *fmt, va_list ap)
{
    char line[LINE_MAX_BYTES];
    int head = request_id ? snprintf(line, sizeof line - 1, "request %s: ", request_id)
                          : snprintf(line, sizeof line - 1, "%s: ", signature);
    if (head < 0)
        return;
    size_t at = (size_t)head < sizeof line - 1 ? (size_t)head : sizeof line - 2;
    size_t room = sizeof line - 1 - at; /* one byte kept back for the newline */
    if (room > BD_LOG_MESSAGE_MAX)
        room = BD_LOG_MESSAGE_MAX;
    int n = vsnprintf(line + at, room, fmt, ap);
    at += chomp(line + at, n, room);
    line[at++] = '\n';
    write_all(line, at);
}

static void json_string(bd_buf *b, const char *s)
{
    bd_buf_append_char(b, '"');
    bd_json_escape(b, bd_slice_from(s));
    bd_buf_append_char(b, '"');
}

static void json_line(bd_log_level level, const char *component, const char *request_id,
                      const char *fmt, va_list ap)
{
    char msg[BD_LOG_MESSAGE_MAX];
    int n = vsnprintf(msg, sizeof msg, fmt, ap);
    size_t len = chomp(msg, n, sizeof msg);

    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    char when[40];
    size_t w = strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(when + w, sizeof when - w, ".%03dZ", (int)(ts.tv_nsec / 1000000));

    /* A bd_buf over stack storage: with max below cap it can never grow, so it never
     * allocates (or frees) and an append that does not fit fails whole. The three bytes
     * kept back close the line even when the message was cut. */
    char line[LINE_MAX_BYTES];
    bd_buf b = {.data = line, .len = 0, .cap = sizeof line, .max = sizeof line - 1 - 3};
    line[0] = '\0';
    bd_buf_append_str(&b, "{\"time\":\"");
    bd_buf_append_str(&b, when);
    bd_buf_append_str(&b, "\",\"level\":\"");
    bd_buf_append_str(&b, LEVEL_NAMES[level]);
    bd_buf_append_str(&b, "\",\"component\":");
    json_string(&b, component);
    if (request_id) {
        bd_buf_append_str(&b, ",\"request_id\":");
        json_string(&b, request_id);
    }
    bd_buf_append_str(&b, ",\"message\":\"");
    bd_json_escape(&b, (bd_slice){msg, len}); /* cut at a whole character or escape */
    memcpy(line + b.len, "\"}\n", 3);
    write_all(line, b.len + 3);
}

static void emit(bd_log_level level, const char *component, const char *signature,
                 const char *request_id, const char *fmt, va_list ap)
{
    if (level < BD_LOG_ERROR || level > BD_LOG_DEBUG || !bd_log_enabled(level))
        return;
    if (atomic_load_explicit(&format, memory_order_relaxed) == BD_LOG_JSON)
        json_line(level, component ? component : "", request_id, fmt, ap);
    else
        text_line(signature ? signature : "", request_id, fmt, ap);
}

void bd_log(bd_log_level level, const char *component, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit(level, component, atomic_load(&program), NULL, fmt, ap);
    va_end(ap);
}

void bd_log_own(bd_log_level level, const char *component, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit(level, component, component, NULL, fmt, ap);
    va_end(ap);
}

void bd_log_for_request(bd_log_level level, const char *component, const char *request_id,
                        const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    emit(level, component, NULL, request_id ? request_id : "", fmt, ap);
    va_end(ap);
}
