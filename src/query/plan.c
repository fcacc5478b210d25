/* Query tree -> store condition tree. One allocation holds every condition. */
#include "query/plan.h"

#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "core/sha256.h"

static size_t count_nodes(const bd_query_node *n, size_t *kids)
{
    size_t total = 1;
    *kids += n->n_children;
    for (size_t i = 0; i < n->n_children; i++)
        total += count_nodes(n->children[i], kids);
    return total;
}

typedef struct {
    const uint8_t *secret;
    bd_card_cond *nodes;
    size_t used;
    const bd_card_cond **kids;
    size_t kids_used;
} planner;

static bd_card_column date_column(bd_query_field f)
{
    return f == BD_QUERY_FIELD_CREATED_AT ? BD_CARD_CREATED_AT : BD_CARD_EXPIRE_DATE;
}

static const bd_card_cond *plan_node(planner *p, const bd_query_node *n)
{
    bd_card_cond *c = &p->nodes[p->used++];
    memset(c, 0, sizeof *c);
    switch (n->kind) {
    case BD_QUERY_ALL:
        c->kind = BD_CC_ALL;
        break;
    case BD_QUERY_AND:
    case BD_QUERY_OR:
    case BD_QUERY_NOT: {
        c->kind = n->kind == BD_QUERY_AND  ? BD_CC_AND
                  : n->kind == BD_QUERY_OR ? BD_CC_OR
                                           : BD_CC_NOT;
        const bd_card_cond **kids = &p->kids[p->kids_used];
        p->kids_used += n->n_children;
        for (size_t i = 0; i < n->n_children; i++)
            kids[i] = plan_node(p, n->children[i]);
        c->kids = kids;
        c->nkids = n->n_children;
        break;
    }
    case BD_QUERY_NUMBER_PATTERN: {
        c->kind = BD_CC_NUMBER;
        memcpy(c->bin, n->bin, sizeof c->bin);
        memcpy(c->last4, n->last4, sizeof c->last4);
        c->length = n->length > 0 ? n->length : 0;
        c->min_length = n->length > 0 ? 0 : n->min_length;
        break;
    }
    case BD_QUERY_NUMBER_EXACT:
    case BD_QUERY_HASH: {
        uint8_t sha[32];
        if (n->kind == BD_QUERY_NUMBER_EXACT) {
            bd_sha256(n->value.ptr, n->value.len, sha);
        } else {
            size_t got = 0;
            sodium_hex2bin(sha, sizeof sha, n->value.ptr, n->value.len, NULL, &got, NULL);
        }
        c->kind = BD_CC_HMAC;
        bd_card_key(p->secret, sha, c->hmac);
        sodium_memzero(sha, sizeof sha);
        break;
    }
    case BD_QUERY_WORD:
        c->kind = BD_CC_WORDS;
        c->column = n->field == BD_QUERY_FIELD_OWNER ? BD_CARD_OWNER : BD_CARD_BANK;
        c->words = n->words;
        c->nwords = n->n_words;
        c->prefix = n->prefix;
        break;
    case BD_QUERY_CVV: /* the store keeps only its keyed hash */
        c->kind = BD_CC_CVV;
        bd_cvv_key(p->secret, n->value, c->hmac);
        break;
    case BD_QUERY_LEAK_ID:
        c->kind = BD_CC_EQUALS;
        c->column = BD_CARD_LEAK_ID;
        c->value = n->value;
        break;
    case BD_QUERY_DATE_RANGE:
        c->kind = BD_CC_RANGE;
        c->column = date_column(n->field);
        if (n->has_lower)
            c->low = bd_slice_from(n->lower);
        if (n->has_upper)
            c->high = bd_slice_from(n->upper);
        c->low_inclusive = n->lower_inclusive;
        c->high_inclusive = n->upper_inclusive;
        break;
    }
    return c;
}

bd_result bd_card_plan_build(bd_slice text, const uint8_t secret[BD_SECRET_LEN], bd_card_plan *plan,
                             bd_query_error *err)
{
    memset(plan, 0, sizeof *plan);
    bd_result r = bd_query_parse(text.ptr ? text.ptr : "", text.len, &plan->query, err);
    if (r != BD_OK)
        return r;
    size_t kids = 0;
    size_t n = count_nodes(bd_query_root(plan->query), &kids);
    plan->nodes = malloc(n * sizeof *plan->nodes);
    plan->kids = malloc((kids ? kids : 1) * sizeof *plan->kids);
    if (!plan->nodes || !plan->kids) {
        bd_card_plan_free(plan);
        return BD_ERR_NOMEM;
    }
    planner p = {.secret = secret, .nodes = plan->nodes, .kids = plan->kids};
    plan->root = plan_node(&p, bd_query_root(plan->query));
    plan->exact = bd_query_exact_terms(plan->query) > 0;
    return BD_OK;
}

const bd_card_cond *bd_card_plan_root(const bd_card_plan *plan)
{
    return plan->root;
}

void bd_card_plan_free(bd_card_plan *plan)
{
    bd_query_free(plan->query);
    free(plan->nodes);
    free(plan->kids);
    memset(plan, 0, sizeof *plan);
}
