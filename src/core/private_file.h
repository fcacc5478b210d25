/* Files only their owner may read: the store, its write-ahead log and index, backups. Modes
 * are set explicitly, so they hold whatever the process umask is. */
#ifndef BD_CORE_PRIVATE_FILE_H
#define BD_CORE_PRIVATE_FILE_H

#include <stdbool.h>
#include <stddef.h>

#include "core/result.h"

/* Creates path as a new empty file of mode 0600, never through a symbolic link, and returns
 * its descriptor (open for writing, close-on-exec). On failure returns -1 with why set:
 * *err_exists true when something (a file, a link, dangling or not) is already there. */
int bd_private_file_create(const char *path, bool *err_exists, char *why, size_t whylen);

/* Takes away the group and other permission bits of path when it is a regular file (mode
 * 0644 becomes 0600). With create, a missing path is first created empty with mode 0600;
 * without, a missing path is fine. Returns BD_OK, or BD_ERR_IO with why set. */
bd_result bd_private_file_restrict(const char *path, bool create, char *why, size_t whylen);

#endif
