/* CVVs: masked and keyed at import, and in stores that kept them in clear. */
#include "ingest/cvv.h"

#include "ingest/mask.h"

void bd_cvv_protect(const uint8_t secret[BD_SECRET_LEN], bd_slice cvv, char masked[5],
                    uint8_t hmac[BD_HMAC_LEN])
{
    bd_mask_cvv(cvv.len, masked);
    bd_cvv_key(secret, cvv, hmac);
}

static void protect_with(void *ctx, bd_slice cvv, char masked[5], uint8_t hmac[BD_HMAC_LEN])
{
    bd_cvv_protect(ctx, cvv, masked, hmac);
}

bd_result bd_cvv_upgrade(bd_store *s, const uint8_t secret[BD_SECRET_LEN], int64_t *changed)
{
    bd_result r = bd_store_cvv_upgrade(s, protect_with, (void *)secret, changed);
    if (r == BD_OK && *changed > 0)
        bd_store_truncate_log(s, 5000); /* BUSY: a later checkpoint empties it */
    return r;
}
