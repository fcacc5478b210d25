/* The life cycle every part of a running breachd shares: a background service (the job
 * runner, the webhook deliverer, the maintenance tickers) and the HTTP listener alike.
 *
 * start gets the environment the composition root assembled (app/app.c: the configuration,
 * the server and its stores) and keeps what it started in *state. drain (may be NULL) stops
 * taking new work and lets work in flight finish; stop ends the service and frees *state.
 *
 * bd_services_start starts a list in order; when one fails, the ones already started are
 * drained and stopped in reverse order and its why is returned. bd_services_stop drains every
 * started service in reverse order, then stops them in reverse order: the last started (the
 * listener) stops taking work first, and nothing is stopped while a later service may still
 * call it. */
#ifndef BD_APP_SERVICE_H
#define BD_APP_SERVICE_H

#include <stddef.h>

#include "core/result.h"

typedef struct bd_service {
    const char *name;
    bd_result (*start)(void *env, void **state, char *why, size_t whylen);
    void (*drain)(void *state); /* NULL: nothing to drain */
    void (*stop)(void *state);
} bd_service;

/* A list of services and what each one started. */
typedef struct {
    const bd_service *const *list;
    size_t n;
    size_t started; /* list[0 .. started) are running */
    void **states;  /* n entries, owned */
} bd_services;

/* Starts list[0..n) in order with env. On failure, *out holds nothing running, why says
 * which service failed and why (the service's own sentence), and the result is its error. */
bd_result bd_services_start(bd_services *out, const bd_service *const *list, size_t n,
                            void *env, char *why, size_t whylen);
/* Drains, then stops, every started service, both in reverse order. Idempotent. */
void bd_services_stop(bd_services *s);

#endif
