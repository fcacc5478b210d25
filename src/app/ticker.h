/* A background thread that calls one function about every period, until stopped: the shape
 * of the maintenance services (app/svc_maintenance.c). */
#ifndef BD_APP_TICKER_H
#define BD_APP_TICKER_H

#include <stdbool.h>

typedef struct bd_ticker bd_ticker;

/* Starts a thread calling tick(arg) every period_ms: at once and then after each wait when
 * first_now, else only after each wait. NULL when out of memory or no thread could start. */
bd_ticker *bd_ticker_start(long period_ms, bool first_now, void (*tick)(void *arg), void *arg);
/* Wakes the thread from its wait, lets a tick in progress finish, joins and frees. NULL is
 * ignored. */
void bd_ticker_stop(bd_ticker *t);

#endif
