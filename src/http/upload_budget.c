/* The server's budget of request-body bytes (upload_budget.h). */
#include "http/upload_budget.h"

void bd_upload_budget_init(bd_upload_budget *b, size_t total)
{
    b->total = total;
    atomic_init(&b->held, 0);
}

bool bd_upload_budget_take(bd_upload_budget *b, size_t n)
{
    size_t held = atomic_load_explicit(&b->held, memory_order_relaxed);
    do {
        if (n > b->total || held > b->total - n)
            return false;
    } while (!atomic_compare_exchange_weak_explicit(&b->held, &held, held + n,
                                                    memory_order_relaxed, memory_order_relaxed));
    return true;
}

void bd_upload_budget_give(bd_upload_budget *b, size_t n)
{
    atomic_fetch_sub_explicit(&b->held, n, memory_order_relaxed);
}

size_t bd_upload_budget_held(const bd_upload_budget *b)
{
    return atomic_load_explicit(&((bd_upload_budget *)b)->held, memory_order_relaxed);
}
