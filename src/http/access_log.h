/* The access log: one JSON line per request, appended with a single write(2) by the thread
 * that served it (O_APPEND makes each line land whole), so worker threads never wait on
 * each other to log. Reopening (after logrotate moved the file) swaps the file under the
 * same descriptor with dup2, so a thread writing concurrently never sees a closed or
 * reused descriptor. */
#ifndef BD_HTTP_ACCESS_LOG_H
#define BD_HTTP_ACCESS_LOG_H

#include <stddef.h>

#include "core/result.h"

typedef struct bd_access_log bd_access_log;

/* Opens (creating, mode 0640) the log for appending. */
bd_result bd_access_log_open(const char *path, bd_access_log **out, char *why, size_t whylen);
/* Opens the path again and switches to it. On failure the old file stays in use. */
bd_result bd_access_log_reopen(bd_access_log *log, char *why, size_t whylen);
/* Appends one line (the caller includes the trailing newline). */
void bd_access_log_write(bd_access_log *log, const char *line, size_t len);
void bd_access_log_close(bd_access_log *log);

#endif
