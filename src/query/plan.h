/* The card-search planner: parses a query and turns its tree into the store's condition
 * tree (store.h, bd_card_cond). Full card numbers and Hash: values become keyed hashes
 * here, so neither reaches the store or a log.
 *
 * Ownership: a bd_card_plan is filled by bd_card_plan_build and released with
 * bd_card_plan_free; the conditions point into the parsed query it owns. */
#ifndef BD_QUERY_PLAN_H
#define BD_QUERY_PLAN_H

#include "auth/secret.h"
#include "query/query.h"
#include "store/store.h"

typedef struct {
    bd_query *query;
    bd_card_cond *nodes;
    const bd_card_cond **kids;
    const bd_card_cond *root;
    bool exact; /* looks a card up by full number or Hash: (the key's exact-lookup budget) */
} bd_card_plan;

/* Parses text (an empty text matches every card) and plans it. BD_ERR_INVALID with *err
 * filled for a query the client must fix; BD_ERR_NOMEM. On failure the plan holds nothing
 * to free. */
bd_result bd_card_plan_build(bd_slice text, const uint8_t secret[BD_SECRET_LEN], bd_card_plan *plan,
                             bd_query_error *err);
const bd_card_cond *bd_card_plan_root(const bd_card_plan *plan);
void bd_card_plan_free(bd_card_plan *plan);

#endif
