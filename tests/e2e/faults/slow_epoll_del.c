/* Preloaded into breachd by test_operations' stop-under-load test: every EPOLL_CTL_DEL
 * waits 5 ms before it runs. libmicrohttpd 0.9.75's MHD_quiesce_daemon and its worker
 * threads both remove the listening socket from an epoll set without a lock between them;
 * the delay turns that rare race (the loser aborts the process) into a certain one, so the
 * test proves breachd's stop no longer goes through it. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sys/epoll.h>
#include <time.h>

int epoll_ctl(int epfd, int op, int fd, struct epoll_event *event)
{
    static int (*next)(int, int, int, struct epoll_event *);
    if (!next)
        *(void **)&next = dlsym(RTLD_NEXT, "epoll_ctl");
    if (op == EPOLL_CTL_DEL) {
        struct timespec pause = {0, 5 * 1000 * 1000};
        nanosleep(&pause, NULL);
    }
    return next(epfd, op, fd, event);
}
