/* sd_notify(3) by hand: one datagram to $NOTIFY_SOCKET. */
#include "core/notify.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

bool bd_notify(const char *state)
{
    const char *path = getenv("NOTIFY_SOCKET");
    if (!path || !*path)
        return true;
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    size_t n = strlen(path);
    if ((path[0] != '/' && path[0] != '@') || n >= sizeof sa.sun_path)
        return false;
    memcpy(sa.sun_path, path, n);
    if (path[0] == '@')
        sa.sun_path[0] = '\0'; /* the abstract namespace */
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return false;
    socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
    ssize_t sent = sendto(fd, state, strlen(state), MSG_NOSIGNAL, (struct sockaddr *)&sa, len);
    close(fd);
    return sent == (ssize_t)strlen(state);
}
