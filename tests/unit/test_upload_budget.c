/* The server's budget of request-body bytes: all or nothing, exact at its boundary, and
 * exact under threads that take and give back at once. */
#include <pthread.h>

#include "http/upload_budget.h"
#include "test.h"

TEST(test_budget_takes_all_or_nothing_up_to_its_total)
{
    bd_upload_budget b;
    bd_upload_budget_init(&b, 100);
    CHECK(bd_upload_budget_take(&b, 60));
    CHECK(!bd_upload_budget_take(&b, 41));
    CHECK_INT((long)bd_upload_budget_held(&b), 60);
    CHECK(bd_upload_budget_take(&b, 40));
    CHECK(!bd_upload_budget_take(&b, 1));
    CHECK(bd_upload_budget_take(&b, 0));
    bd_upload_budget_give(&b, 60);
    CHECK_INT((long)bd_upload_budget_held(&b), 40);
    CHECK(!bd_upload_budget_take(&b, 61));
    CHECK(bd_upload_budget_take(&b, 60));
    bd_upload_budget_give(&b, 100);
    CHECK_INT((long)bd_upload_budget_held(&b), 0);
}

TEST(test_budget_refuses_a_take_past_its_total_without_wrapping)
{
    bd_upload_budget b;
    bd_upload_budget_init(&b, 100);
    CHECK(!bd_upload_budget_take(&b, 101));
    CHECK(!bd_upload_budget_take(&b, (size_t)-1));
    CHECK(bd_upload_budget_take(&b, 1));
    CHECK(!bd_upload_budget_take(&b, (size_t)-1));
    CHECK_INT((long)bd_upload_budget_held(&b), 1);
}

enum { THREADS = 8, ROUNDS = 20000 };

typedef struct {
    bd_upload_budget *b;
    long taken;
    bool over; /* saw more held than the total */
} worker;

static void *churn(void *arg)
{
    worker *w = arg;
    for (int i = 0; i < ROUNDS; i++) {
        size_t n = (size_t)(i % 7 + 1);
        if (bd_upload_budget_take(w->b, n)) {
            w->taken++;
            if (bd_upload_budget_held(w->b) > w->b->total)
                w->over = true;
            bd_upload_budget_give(w->b, n);
        }
    }
    return NULL;
}

TEST(test_budget_never_passes_its_total_under_threads)
{
    bd_upload_budget b;
    bd_upload_budget_init(&b, 16);
    worker ws[THREADS];
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++) {
        ws[i] = (worker){&b, 0, false};
        CHECK(pthread_create(&t[i], NULL, churn, &ws[i]) == 0);
    }
    long taken = 0;
    for (int i = 0; i < THREADS; i++) {
        pthread_join(t[i], NULL);
        CHECK(!ws[i].over);
        taken += ws[i].taken;
    }
    CHECK(taken > 0);
    CHECK_INT((long)bd_upload_budget_held(&b), 0);
}

int main(void)
{
    RUN(test_budget_takes_all_or_nothing_up_to_its_total);
    RUN(test_budget_refuses_a_take_past_its_total_without_wrapping);
    RUN(test_budget_never_passes_its_total_under_threads);
    return TEST_EXIT();
}
