/* Fuzz target: paging-token decoding of arbitrary text must never crash, and only a token
 * this process signed may decode as valid. */
#include <sodium.h>
#include <stdint.h>
#include <string.h>

#include "auth/token.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static uint8_t secret[BD_SECRET_LEN] = {1, 2, 3};
    static const uint8_t search[BD_SEARCH_DIGEST_LEN] = "fuzz-search-0001";
    bd_token t;
    bd_token_status st =
        bd_token_decode(secret, (bd_slice){(const char *)data, size}, 1800000000, 7, search, &t);
    if (st == BD_TOKEN_OK) /* forging a signature by mutation would be a real finding */
        __builtin_trap();
    /* Round trip: whatever fields the input spells, an encoded token decodes to them. */
    bd_token in = {.issued_at = 1800000000, .key_id = 7};
    memcpy(in.search, search, sizeof in.search);
    if (size >= 20) {
        memcpy(&in.records_found, data, 8);
        memcpy(&in.after_date, data + 8, 4);
        memcpy(&in.after_id, data + 12, 8);
    }
    char text[BD_TOKEN_TEXT_MAX + 1];
    bd_token_encode(secret, &in, text);
    if (bd_token_decode(secret, bd_slice_from(text), 1800000000, 7, search, &t) != BD_TOKEN_OK ||
        t.records_found != in.records_found || t.after_id != in.after_id ||
        t.after_date != in.after_date)
        __builtin_trap();
    return 0;
}
