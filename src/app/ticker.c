/* A thread calling a function every period until stopped (see ticker.h). */
#include "app/ticker.h"

#include <pthread.h>
#include <stdlib.h>
#include <time.h>

struct bd_ticker {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool stopping;
    bool first_now;
    long period_ms;
    void (*tick)(void *arg);
    void *arg;
};

/* Waits the period, or less when stopping; false once stopping. */
static bool wait_or_stop(bd_ticker *t)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_nsec += t->period_ms * 1000000L;
    until.tv_sec += until.tv_nsec / 1000000000L;
    until.tv_nsec %= 1000000000L;
    pthread_mutex_lock(&t->lock);
    if (!t->stopping)
        pthread_cond_timedwait(&t->cond, &t->lock, &until);
    bool go_on = !t->stopping;
    pthread_mutex_unlock(&t->lock);
    return go_on;
}

static void *run(void *arg)
{
    bd_ticker *t = arg;
    if (t->first_now)
        t->tick(t->arg);
    while (wait_or_stop(t))
        t->tick(t->arg);
    return NULL;
}

bd_ticker *bd_ticker_start(long period_ms, bool first_now, void (*tick)(void *arg), void *arg)
{
    bd_ticker *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    *t = (bd_ticker){.first_now = first_now, .period_ms = period_ms, .tick = tick, .arg = arg};
    pthread_mutex_init(&t->lock, NULL);
    pthread_cond_init(&t->cond, NULL);
    if (pthread_create(&t->thread, NULL, run, t) != 0) {
        pthread_mutex_destroy(&t->lock);
        pthread_cond_destroy(&t->cond);
        free(t);
        return NULL;
    }
    return t;
}

void bd_ticker_stop(bd_ticker *t)
{
    if (!t)
        return;
    pthread_mutex_lock(&t->lock);
    t->stopping = true;
    pthread_cond_broadcast(&t->cond);
    pthread_mutex_unlock(&t->lock);
    pthread_join(t->thread, NULL);
    pthread_mutex_destroy(&t->lock);
    pthread_cond_destroy(&t->cond);
    free(t);
}
