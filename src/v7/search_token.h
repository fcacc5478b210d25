/* The search a breach-search paging token continues (search.c): the digest a token is bound
 * to, so that it only continues its own search, and the search itself, which a token carries
 * sealed, so that a token alone continues it. Only v7/search.c includes this. */
#ifndef BD_V7_SEARCH_TOKEN_H
#define BD_V7_SEARCH_TOKEN_H

#include <stdbool.h>
#include <stdint.h>

#include "auth/token.h"
#include "store/store.h"

/* Digest of everything that defines the search q (its type, key and filters). */
void bd_search_digest(const bd_record_query *q, uint8_t out[BD_SEARCH_DIGEST_LEN]);
/* Writes q into t->query; a search too large to carry leaves query_len 0. */
void bd_search_carry(const bd_record_query *q, bd_token *t);
/* The search t carries into q (its keys point into t); false when it carries none. */
bool bd_search_carried(const bd_token *t, bd_record_query *q);

#endif
