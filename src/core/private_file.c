/* Owner-only files: O_EXCL|O_NOFOLLOW creation and fchmod on the descriptor, so a file that
 * is swapped for a link between two calls is never the one changed. */
#include "core/private_file.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int bd_private_file_create(const char *path, bool *err_exists, char *why, size_t whylen)
{
    *err_exists = false;
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        int err = errno;
        struct stat st;
        *err_exists = err == EEXIST || err == ELOOP;
        if (*err_exists && lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
            bd_why(why, whylen, "%s is a symbolic link; refusing to write through it", path);
        else if (*err_exists)
            bd_why(why, whylen, "%s exists; choose a new file", path);
        else
            bd_why(why, whylen, "cannot create %s: %s", path, strerror(err));
        return -1;
    }
    if (fchmod(fd, 0600) != 0) { /* open's mode went through the umask */
        bd_why(why, whylen, "cannot set the mode of %s to 0600: %s", path, strerror(errno));
        close(fd);
        unlink(path);
        return -1;
    }
    return fd;
}

bd_result bd_private_file_restrict(const char *path, bool create, char *why, size_t whylen)
{
    bool created = false;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0 && errno == ENOENT && create) {
        fd = open(path, O_RDONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        created = fd >= 0;
        if (fd < 0 && errno == EEXIST) /* created meanwhile: restrict that one */
            fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    }
    if (fd < 0 && errno == ENOENT && !create)
        return BD_OK;
    if (fd < 0) {
        bd_why(why, whylen, "cannot open %s: %s", path, strerror(errno));
        return BD_ERR_IO;
    }
    struct stat st;
    bd_result r = BD_OK;
    if (fstat(fd, &st) != 0) {
        bd_why(why, whylen, "cannot read the mode of %s: %s", path, strerror(errno));
        r = BD_ERR_IO;
    } else if (S_ISREG(st.st_mode) && (created || (st.st_mode & 077)) &&
               fchmod(fd, created ? 0600 : st.st_mode & 0700) != 0) {
        bd_why(why, whylen, "%s can be read by other users and cannot be made private: %s", path,
               strerror(errno));
        r = BD_ERR_IO;
    }
    close(fd);
    return r;
}
