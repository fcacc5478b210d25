/* Cards on PostgreSQL: the next step of this backend. Until it lands every card operation
 * is refused with BD_ERR_INVALID (the tables exist, see schema.c), and this backend is not
 * offered to users before it does. */
#include "store/pg/pg_impl.h"

bd_result pg_card_put(bd_store *s, const bd_card_in *c, bool *inserted)
{
    (void)s;
    (void)c;
    *inserted = false;
    return BD_ERR_INVALID; /* next step: card import */
}

bd_result pg_card_count(bd_store *s, const bd_card_query *q, int64_t *count)
{
    (void)s;
    (void)q;
    *count = 0;
    return BD_ERR_INVALID; /* next step: card search */
}

bd_result pg_card_find(bd_store *s, const bd_card_query *q, bd_card_cb cb, void *ctx)
{
    (void)s;
    (void)q;
    (void)cb;
    (void)ctx;
    return BD_ERR_INVALID; /* next step: card search */
}
