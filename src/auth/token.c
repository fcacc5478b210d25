/* Paging token layout (all integers little-endian), then base64url without padding:
 *   version(1) issued_at(8) key_id(8) search(16) records_found(8) after_date(4) after_id(8)
 *   mac(16) = truncated HMAC-SHA-256 of everything before it, under the "token" label. */
#include "auth/token.h"

#include <sodium.h>
#include <string.h>

#define VERSION 1
#define BODY_LEN (1 + 8 + 8 + BD_SEARCH_DIGEST_LEN + 8 + 4 + 8)
#define MAC_LEN 16
#define RAW_LEN (BODY_LEN + MAC_LEN)

static void put64(uint8_t *p, int64_t v)
{
    uint64_t u = (uint64_t)v;
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(u >> (8 * i));
}

static int64_t get64(const uint8_t *p)
{
    uint64_t u = 0;
    for (int i = 0; i < 8; i++)
        u |= (uint64_t)p[i] << (8 * i);
    return (int64_t)u;
}

static void mac_of(const uint8_t secret[BD_SECRET_LEN], const uint8_t body[BODY_LEN],
                   uint8_t out[MAC_LEN])
{
    uint8_t full[BD_MAC_LEN];
    bd_keyed_hash(secret, "token", body, BODY_LEN, full);
    memcpy(out, full, MAC_LEN);
}

void bd_token_encode(const uint8_t secret[BD_SECRET_LEN], const bd_token *t,
                     char out[BD_TOKEN_TEXT_MAX + 1])
{
    uint8_t raw[RAW_LEN];
    uint8_t *p = raw;
    *p++ = VERSION;
    put64(p, t->issued_at);
    p += 8;
    put64(p, t->key_id);
    p += 8;
    memcpy(p, t->search, BD_SEARCH_DIGEST_LEN);
    p += BD_SEARCH_DIGEST_LEN;
    put64(p, t->records_found);
    p += 8;
    uint32_t d = (uint32_t)t->after_date;
    for (int i = 0; i < 4; i++)
        *p++ = (uint8_t)(d >> (8 * i));
    put64(p, t->after_id);
    p += 8;
    mac_of(secret, raw, p);
    sodium_bin2base64(out, BD_TOKEN_TEXT_MAX + 1, raw, RAW_LEN,
                      sodium_base64_VARIANT_URLSAFE_NO_PADDING);
}

bd_token_status bd_token_decode(const uint8_t secret[BD_SECRET_LEN], bd_slice text, int64_t now,
                                int64_t key_id, const uint8_t search[BD_SEARCH_DIGEST_LEN],
                                bd_token *t)
{
    uint8_t raw[RAW_LEN + 1];
    size_t n = 0;
    const char *end = NULL;
    if (text.len == 0 || text.len > BD_TOKEN_TEXT_MAX ||
        sodium_base642bin(raw, sizeof raw, text.ptr, text.len, NULL, &n, &end,
                          sodium_base64_VARIANT_URLSAFE_NO_PADDING) != 0 ||
        end != text.ptr + text.len || n != RAW_LEN || raw[0] != VERSION)
        return BD_TOKEN_MALFORMED;
    uint8_t want[MAC_LEN];
    mac_of(secret, raw, want);
    if (sodium_memcmp(want, raw + BODY_LEN, MAC_LEN) != 0)
        return BD_TOKEN_TAMPERED;
    const uint8_t *p = raw + 1;
    bd_token tok;
    tok.issued_at = get64(p);
    p += 8;
    tok.key_id = get64(p);
    p += 8;
    memcpy(tok.search, p, BD_SEARCH_DIGEST_LEN);
    p += BD_SEARCH_DIGEST_LEN;
    tok.records_found = get64(p);
    p += 8;
    uint32_t d = 0;
    for (int i = 0; i < 4; i++)
        d |= (uint32_t)*p++ << (8 * i);
    tok.after_date = (int32_t)d;
    tok.after_id = get64(p);
    if (now - tok.issued_at > BD_TOKEN_LIFETIME || tok.issued_at > now + 300)
        return BD_TOKEN_EXPIRED;
    if (tok.key_id != key_id)
        return BD_TOKEN_OTHER_KEY;
    if (sodium_memcmp(tok.search, search, BD_SEARCH_DIGEST_LEN) != 0)
        return BD_TOKEN_OTHER_SEARCH;
    *t = tok;
    return BD_TOKEN_OK;
}

const char *bd_token_status_message(bd_token_status s)
{
    switch (s) {
    case BD_TOKEN_OK:
        return "the paging token is valid";
    case BD_TOKEN_MALFORMED:
        return "paging_token is malformed; pass the pagination_token of the previous response "
               "unchanged";
    case BD_TOKEN_TAMPERED:
        return "paging_token was altered or was issued by another server; start the search "
               "again without it";
    case BD_TOKEN_EXPIRED:
        return "paging_token has expired (tokens last 24 hours); start the search again "
               "without it";
    case BD_TOKEN_OTHER_KEY:
        return "paging_token was issued to another API key; start the search again without it";
    case BD_TOKEN_OTHER_SEARCH:
        return "paging_token belongs to a different search; send the same type, account and "
               "filters as the first request";
    }
    return "paging_token is not valid";
}
