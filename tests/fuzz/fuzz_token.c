/* Fuzz target: paging-token decoding. The input is sealed with the test secret first, so
 * what gets fuzzed is the decoder behind the seal (lengths, field checks, expiry, binding);
 * the raw input is also decoded as text, where only a forged seal could succeed. */
#include <sodium.h>
#include <stdint.h>
#include <string.h>

#include "auth/token.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static uint8_t secret[BD_SECRET_LEN] = {1, 2, 3};
    static const uint8_t search[BD_SEARCH_DIGEST_LEN] = "fuzz-search-0001";
    const int64_t now = 1800000000;
    bd_token t;
    if (bd_token_decode(secret, (bd_slice){(const char *)data, size}, now, 7, search, &t) ==
        BD_TOKEN_OK) /* forging a seal by mutation would be a real finding */
        __builtin_trap();
    char text[BD_TOKEN_TEXT_MAX + 1];
    if (!bd_token_seal_bytes(secret, data, size, text))
        return 0;
    bd_token_status st = bd_token_decode(secret, bd_slice_from(text), now, 7, search, &t);
    if (st == BD_TOKEN_OK) {
        /* Whatever decoded must encode and decode to the same fields. */
        char again[BD_TOKEN_TEXT_MAX + 1];
        bd_token back;
        bd_token_encode(secret, &t, again);
        if (bd_token_decode(secret, bd_slice_from(again), now, 7, search, &back) != BD_TOKEN_OK ||
            back.records_found != t.records_found || back.after_id != t.after_id ||
            back.after_date != t.after_date || back.issued_at != t.issued_at ||
            back.query_len != t.query_len || memcmp(back.query, t.query, t.query_len) != 0 ||
            t.records_found < 0 || t.after_id < 0)
            __builtin_trap();
    } else if (st == BD_TOKEN_TAMPERED) {
        __builtin_trap(); /* our own seal must always open */
    }
    return 0;
}
