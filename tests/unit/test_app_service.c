/* The services' life cycle (app/service.h): start order, drain then stop in reverse, and a
 * failing start stops the ones already started and no other. */
#include <stdio.h>
#include <string.h>

#include "app/service.h"
#include "test.h"

/* What the fake services did, in order: "+a" started, "~a" drained, "-a" stopped. */
typedef struct {
    char log[256];
    const char *fail; /* the name of the service whose start fails */
} env;

static void note(env *e, char what, const char *name)
{
    size_t n = strlen(e->log);
    snprintf(e->log + n, sizeof e->log - n, "%s%c%s", n ? " " : "", what, name);
}

/* Each fake's state is a pointer into a table of (env, name) pairs. */
typedef struct {
    env *e;
    const char *name;
} fake;

static fake fakes[8];
static size_t nfakes;

#define FAKE(id)                                                                                   \
    static bd_result start_##id(void *ev, void **state, char *why, size_t whylen)                  \
    {                                                                                              \
        env *e = ev;                                                                               \
        if (e->fail && strcmp(e->fail, #id) == 0) {                                                \
            snprintf(why, whylen, "cannot start " #id);                                            \
            note(e, '!', #id);                                                                     \
            return BD_ERR_IO;                                                                      \
        }                                                                                          \
        fakes[nfakes] = (fake){e, #id};                                                            \
        *state = &fakes[nfakes++];                                                                 \
        note(e, '+', #id);                                                                         \
        return BD_OK;                                                                              \
    }                                                                                              \
    static const bd_service svc_##id = {#id, start_##id, drain_fake, stop_fake};

static void drain_fake(void *state)
{
    fake *f = state;
    note(f->e, '~', f->name);
}

static void stop_fake(void *state)
{
    fake *f = state;
    note(f->e, '-', f->name);
}

FAKE(stores)
FAKE(jobs)
FAKE(webhooks)
FAKE(http)

/* A service with nothing to drain. */
static const bd_service svc_quiet = {"quiet", start_jobs, NULL, stop_fake};

static const bd_service *const ALL[] = {&svc_stores, &svc_jobs, &svc_webhooks, &svc_http};

TEST(test_services_start_in_order_and_stop_in_reverse)
{
    env e = {0};
    nfakes = 0;
    bd_services s;
    char why[64] = "x";
    CHECK_INT(bd_services_start(&s, ALL, 4, &e, why, sizeof why), BD_OK);
    CHECK_STR(why, "");
    CHECK_STR(e.log, "+stores +jobs +webhooks +http");
    CHECK_INT(s.started, 4);
    e.log[0] = '\0';
    bd_services_stop(&s);
    /* every one drains before any stops: the listener stops taking work first */
    CHECK_STR(e.log, "~http ~webhooks ~jobs ~stores -http -webhooks -jobs -stores");
    e.log[0] = '\0';
    bd_services_stop(&s); /* a second stop does nothing */
    CHECK_STR(e.log, "");
}

TEST(test_a_failing_start_stops_the_ones_started_in_reverse)
{
    env e = {.fail = "webhooks"};
    nfakes = 0;
    bd_services s;
    char why[64];
    CHECK_INT(bd_services_start(&s, ALL, 4, &e, why, sizeof why), BD_ERR_IO);
    CHECK_STR(why, "cannot start webhooks");
    /* http never started; the failed one is not stopped */
    CHECK_STR(e.log, "+stores +jobs !webhooks ~jobs ~stores -jobs -stores");
    CHECK_INT(s.started, 0);
    e.log[0] = '\0';
    bd_services_stop(&s);
    CHECK_STR(e.log, "");
}

TEST(test_the_first_failing_starts_nothing)
{
    env e = {.fail = "stores"};
    nfakes = 0;
    bd_services s;
    char why[64];
    CHECK_INT(bd_services_start(&s, ALL, 4, &e, why, sizeof why), BD_ERR_IO);
    CHECK_STR(e.log, "!stores");
}

TEST(test_a_service_without_drain_is_only_stopped)
{
    env e = {0};
    nfakes = 0;
    const bd_service *const list[] = {&svc_quiet, &svc_http};
    bd_services s;
    char why[64];
    CHECK_INT(bd_services_start(&s, list, 2, &e, why, sizeof why), BD_OK);
    bd_services_stop(&s);
    CHECK_STR(e.log, "+jobs +http ~http -http -jobs");
}

TEST(test_an_empty_list_starts_and_stops)
{
    bd_services s;
    char why[8];
    CHECK_INT(bd_services_start(&s, NULL, 0, NULL, why, sizeof why), BD_OK);
    bd_services_stop(&s);
}

int main(void)
{
    RUN(test_services_start_in_order_and_stop_in_reverse);
    RUN(test_a_failing_start_stops_the_ones_started_in_reverse);
    RUN(test_the_first_failing_starts_nothing);
    RUN(test_a_service_without_drain_is_only_stopped);
    RUN(test_an_empty_list_starts_and_stops);
    return TEST_EXIT();
}
