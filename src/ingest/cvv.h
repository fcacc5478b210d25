/* CVVs as breachd keeps them: a mask that shows only their length and a keyed hash under the
 * server secret, made at import and, for a store that kept them in clear before it learnt
 * to, by the upgrade that the first program holding the secret finishes
 * (store.h, bd_store_cvv_upgrade). */
#ifndef BD_INGEST_CVV_H
#define BD_INGEST_CVV_H

#include <stdint.h>

#include "auth/secret.h"
#include "core/result.h"
#include "core/slice.h"
#include "store/store.h"

/* A CVV's mask (bd_mask_cvv: one '*' per digit) and keyed hash (bd_cvv_key) under secret. */
void bd_cvv_protect(const uint8_t secret[BD_SECRET_LEN], bd_slice cvv, char masked[5],
                    uint8_t hmac[BD_HMAC_LEN]);

/* Finishes the CVV upgrade of s, a writer outside a transaction, with secret (already
 * checked to be the store's): bd_store_cvv_upgrade with bd_cvv_protect, then, when cards
 * changed, the store's log emptied so no copy of a plain CVV stays in it (waiting up to 5 s
 * for readers; a log they hold is emptied by a later checkpoint). *changed: the cards
 * changed, 0 when nothing waited. Returns the upgrade's result. */
bd_result bd_cvv_upgrade(bd_store *s, const uint8_t secret[BD_SECRET_LEN], int64_t *changed);

#endif
