/* The process's log: one line per event on standard error (or a descriptor a test sets), as
 * text or as JSON lines. Library code logs here and never writes to stderr itself.
 *
 * Each line has a level, a component ("store", "webhook", "http", "auth", "jobs", ...) and a
 * message, one printf-style sentence. Text lines read "<signature>: <message>\n", as they
 * always have; the signature is
 *   - the program's name for the process's own lines (bd_log: "breachd: serving ..."),
 *   - the component's own name for a library shared by every program, whose lines read the
 *     same under breachd and breachctl (bd_log_own: "store: prepare failed: ..."),
 *   - "request <id>" for a line about one request (bd_log_for_request).
 * JSON lines carry the same message without the signature:
 *   {"time":"2026-11-26T20:00:00.123Z","level":"info","component":"webhook",
 *    "request_id":"...","message":"..."}
 * ("request_id" only on a request's line; time in UTC to the millisecond).
 *
 * A line is formatted on the stack (a message past BD_LOG_MESSAGE_MAX bytes is cut) and goes
 * out in one write(2), so threads may log at any time without a lock and lines do not
 * interleave. The settings (program, format, level, descriptor) are meant to be set once by
 * main before threads start; they are atomics, so a late change is safe, only not ordered.
 *
 * Never log a secret: no API key, secret file content, password, webhook URL (it may carry
 * the receiver's token) or store URI with its password; log a key's id and a URI's shown
 * (password-free) form. There is deliberately no helper that logs a value "as is": every
 * line is a sentence whose format string the reader can check. */
#ifndef BD_CORE_LOG_H
#define BD_CORE_LOG_H

#include <stdbool.h>

typedef enum { BD_LOG_ERROR, BD_LOG_WARN, BD_LOG_INFO, BD_LOG_DEBUG } bd_log_level;
typedef enum { BD_LOG_TEXT, BD_LOG_JSON } bd_log_format;

#define BD_LOG_MESSAGE_MAX 4096 /* bytes of one formatted message; the rest is cut */

/* The program's name that signs its text lines (a static string); "breachd" by default. */
void bd_log_set_program(const char *name);
/* BD_LOG_TEXT by default. */
void bd_log_set_format(bd_log_format format);
/* Lines above this level are dropped; BD_LOG_INFO by default. */
void bd_log_set_level(bd_log_level level);
/* Where lines go: 2 (standard error) by default; tests set a pipe or a file. */
void bd_log_set_fd(int fd);

/* "error", "warn", "info", "debug" / "text", "json": true and *out set, false otherwise. */
bool bd_log_parse_level(const char *s, bd_log_level *out);
bool bd_log_parse_format(const char *s, bd_log_format *out);
/* Whether a line of this level would be written (to skip costly arguments). */
bool bd_log_enabled(bd_log_level level);

/* One line signed by the program. A trailing newline in the message is dropped (every line
 * ends with exactly one). */
void bd_log(bd_log_level level, const char *component, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* One line signed by the component itself (a library used by every program). */
void bd_log_own(bd_log_level level, const char *component, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* One line about a request, signed "request <request_id>"; JSON adds "request_id". */
void bd_log_for_request(bd_log_level level, const char *component, const char *request_id,
                        const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#endif
