/* Append-only access log file. */
#include "http/access_log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct bd_access_log {
    int fd;
    char *path;
};

/* The log holds client addresses and keyed account hashes: created for the owner alone. */
static int open_log(const char *path)
{
    return open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
}

bd_result bd_access_log_open(const char *path, bd_access_log **out, char *why, size_t whylen)
{
    *out = NULL;
    bd_access_log *log = calloc(1, sizeof *log);
    if (!log || !(log->path = strdup(path))) {
        free(log);
        return BD_ERR_NOMEM;
    }
    log->fd = open_log(path);
    if (log->fd < 0) {
        snprintf(why, whylen, "cannot open the access log %s: %s", path, strerror(errno));
        free(log->path);
        free(log);
        return BD_ERR_IO;
    }
    *out = log;
    return BD_OK;
}

bd_result bd_access_log_reopen(bd_access_log *log, char *why, size_t whylen)
{
    int fd = open_log(log->path);
    if (fd < 0) {
        snprintf(why, whylen, "cannot reopen the access log %s: %s", log->path, strerror(errno));
        return BD_ERR_IO;
    }
    bd_result r = dup2(fd, log->fd) < 0 ? BD_ERR_IO : BD_OK;
    if (r != BD_OK)
        snprintf(why, whylen, "cannot switch the access log: %s", strerror(errno));
    close(fd);
    return r;
}

void bd_access_log_write(bd_access_log *log, const char *line, size_t len)
{
    while (len > 0) {
        ssize_t n = write(log->fd, line, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return; /* a full disk must not stop serving; the metrics still count */
        line += n;
        len -= (size_t)n;
    }
}

void bd_access_log_close(bd_access_log *log)
{
    if (!log)
        return;
    close(log->fd);
    free(log->path);
    free(log);
}
