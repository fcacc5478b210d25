/* The store connection policy (store/pool.h), on each backend: one connection per
 * thread, opened on first use with the pool's flags and kept; a store that cannot be opened
 * says why and is tried again; a dropped connection is closed and replaced at the next call;
 * everything is closed with the pool (ASan sees a leak). */
#include <pthread.h>

#include "store/pool.h"
#include "store_fixture.h"
#include "test.h"

TEST(test_pool_keeps_one_connection_per_thread)
{
    fresh();
    bd_store_pool *p = bd_store_pool_new(fresh_uri(), BD_STORE_WRITE | BD_STORE_SMALL_WRITES);
    CHECK(p != NULL);
    CHECK_STR(bd_store_pool_uri(p), fresh_uri());
    bd_store *a = NULL, *b = NULL;
    char why[512];
    CHECK_INT(bd_store_pool_get(p, &a, why, sizeof why), BD_OK);
    CHECK_INT(bd_store_pool_get(p, &b, why, sizeof why), BD_OK);
    CHECK(a != NULL && a == b);
    /* the pool's flags: its connections write */
    CHECK_INT(bd_store_meta_set(a, "pool_test", "1"), BD_OK);
    bd_store_pool_free(p);
}

typedef struct {
    bd_store_pool *pool;
    bd_store *got[2];
} thread_arg;

static void *take_twice(void *arg)
{
    thread_arg *t = arg;
    char why[512];
    if (bd_store_pool_get(t->pool, &t->got[0], why, sizeof why) != BD_OK ||
        bd_store_pool_get(t->pool, &t->got[1], why, sizeof why) != BD_OK)
        t->got[0] = t->got[1] = NULL;
    return NULL;
}

TEST(test_pool_gives_each_thread_its_own_and_outlives_the_threads)
{
    fresh();
    bd_store_pool *p = bd_store_pool_new(fresh_uri(), BD_STORE_READ);
    enum { N = 4 };
    pthread_t th[N];
    thread_arg args[N];
    for (int i = 0; i < N; i++) {
        args[i] = (thread_arg){p, {NULL, NULL}};
        CHECK_INT(pthread_create(&th[i], NULL, take_twice, &args[i]), 0);
    }
    for (int i = 0; i < N; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < N; i++) {
        CHECK(args[i].got[0] != NULL && args[i].got[0] == args[i].got[1]);
        for (int j = 0; j < i; j++)
            CHECK(args[i].got[0] != args[j].got[0]);
    }
    bd_store *mine = NULL;
    char why[512];
    CHECK_INT(bd_store_pool_get(p, &mine, why, sizeof why), BD_OK);
    for (int i = 0; i < N; i++)
        CHECK(mine != args[i].got[0]);
    bd_store_pool_free(p); /* closes all five: the threads are gone, their connections not */
}

TEST(test_pool_says_why_and_tries_again)
{
    const char *uri = missing_store_uri(); /* never made: opening without CREATE fails */
    bd_store_pool *p = bd_store_pool_new(uri, BD_STORE_READ);
    bd_store *s = (bd_store *)p;
    char why[512] = "";
    CHECK(bd_store_pool_get(p, &s, why, sizeof why) != BD_OK);
    CHECK(s == NULL);
    CHECK(why[0] != '\0');
    why[0] = '\0';
    CHECK(bd_store_pool_get(p, &s, why, sizeof why) != BD_OK); /* asked again, not cached */
    CHECK(why[0] != '\0');
    bd_store_pool_free(p);
    bd_store_pool_free(NULL);
}

TEST(test_pool_open_once_is_the_callers)
{
    fresh();
    bd_store_pool *p = bd_store_pool_new(fresh_uri(), BD_STORE_READ);
    bd_store *mine = NULL, *own = NULL;
    char why[512];
    CHECK_INT(bd_store_pool_get(p, &mine, why, sizeof why), BD_OK);
    CHECK_INT(bd_store_pool_open_once(p, &own, why, sizeof why), BD_OK);
    CHECK(own != NULL && own != mine);
    bd_store_close(own);
    bd_store_pool_free(p);
}

TEST(test_pool_drop_closes_this_threads_and_the_next_get_opens_anew)
{
    fresh();
    bd_store_pool *p = bd_store_pool_new(fresh_uri(), BD_STORE_WRITE | BD_STORE_SMALL_WRITES);
    bd_store_pool_drop(p); /* nothing to drop yet */
    bd_store *a = NULL, *b = NULL;
    char why[512];
    CHECK_INT(bd_store_pool_get(p, &a, why, sizeof why), BD_OK);
    bd_store_pool_drop(p);
    CHECK_INT(bd_store_pool_get(p, &b, why, sizeof why), BD_OK);
    CHECK(b != NULL);
    CHECK_INT(bd_store_meta_set(b, "pool_test", "2"), BD_OK); /* the new one works */
    bd_store *c = NULL;
    CHECK_INT(bd_store_pool_get(p, &c, why, sizeof why), BD_OK);
    CHECK(c == b);
    bd_store_pool_free(p); /* closes b once; a was closed by the drop (ASan: no double close) */
}

static void suite(void)
{
    RUN_CONTRACT(test_pool_keeps_one_connection_per_thread);
    RUN_CONTRACT(test_pool_gives_each_thread_its_own_and_outlives_the_threads);
    RUN_CONTRACT(test_pool_says_why_and_tries_again);
    RUN_CONTRACT(test_pool_open_once_is_the_callers);
    RUN_CONTRACT(test_pool_drop_closes_this_threads_and_the_next_get_opens_anew);
}

int main(void)
{
    return fx_main(suite);
}
