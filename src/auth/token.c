/* Paging token layout, then base64url without padding:
 *   version(1) nonce(24) sealed(body + 16)
 * where body is issued_at(8) key_id(8) search(16) records_found(8) after_date(4) after_id(8)
 * query_len(2) query(query_len), integers little-endian (version 2 bodies end before
 * query_len; they are still read, as tokens that do not carry their search), sealed with
 * XChaCha20-Poly1305 under a key derived from the server secret ("token-seal"), the
 * version byte as associated data. A pseudorandom nonce per token: two tokens of the same
 * search look unrelated. */
#include "auth/token.h"

#include <sodium.h>
#include <string.h>

#include "core/base64url.h"

#define VERSION 3
#define VERSION_WITHOUT_QUERY 2
#define FIXED_LEN (8 + 8 + BD_SEARCH_DIGEST_LEN + 8 + 4 + 8)
#define BODY_MAX (FIXED_LEN + 2 + BD_TOKEN_QUERY_MAX)
#define NONCE_LEN crypto_aead_xchacha20poly1305_ietf_NPUBBYTES
#define TAG_LEN crypto_aead_xchacha20poly1305_ietf_ABYTES
#define HEAD_LEN (1 + NONCE_LEN)
#define RAW_MAX ((BD_TOKEN_TEXT_MAX * 3) / 4)

_Static_assert(BD_MAC_LEN == crypto_aead_xchacha20poly1305_ietf_KEYBYTES, "seal key size");
_Static_assert(HEAD_LEN + BODY_MAX + TAG_LEN <= RAW_MAX, "a token fits its text");
_Static_assert(BD_BASE64URL_LEN(RAW_MAX) <= BD_TOKEN_TEXT_MAX, "a sealed token's text fits");
_Static_assert(BD_TOKEN_QUERY_MAX <= 0xffff, "query_len fits two bytes");

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

/* A nonce without a system call per token: BLAKE2b of a per-thread counter under a
 * per-thread random key. Nonces never repeat (the counter), and being pseudorandom they say
 * nothing about how many tokens a thread issued, as a bare counter in the token would. */
static void new_nonce(uint8_t out[NONCE_LEN])
{
    static _Thread_local uint8_t key[crypto_generichash_KEYBYTES];
    static _Thread_local uint64_t counter;
    if (counter == 0)
        randombytes_buf(key, sizeof key);
    counter++;
    uint8_t in[8];
    put64(in, (int64_t)counter);
    crypto_generichash(out, NONCE_LEN, in, sizeof in, key, sizeof key);
}

/* The sealing key, derived once per thread for the secret it last saw (one per process in
 * practice), as bd_keyed_hash keeps its keyed state: a derivation per token was an HMAC
 * for every page that has a next one. */
static const uint8_t *seal_key(const uint8_t secret[BD_SECRET_LEN])
{
    static _Thread_local struct {
        bool set;
        uint8_t secret[BD_SECRET_LEN];
        uint8_t key[BD_MAC_LEN];
    } cache;
    if (!cache.set || sodium_memcmp(cache.secret, secret, BD_SECRET_LEN) != 0) {
        bd_keyed_hash(secret, "token-seal", "", 0, cache.key);
        memcpy(cache.secret, secret, BD_SECRET_LEN);
        cache.set = true;
    }
    return cache.key;
}

bool bd_token_seal_bytes(const uint8_t secret[BD_SECRET_LEN], const uint8_t *body, size_t len,
                         char out[BD_TOKEN_TEXT_MAX + 1])
{
    uint8_t raw[RAW_MAX];
    if (len > RAW_MAX - HEAD_LEN - TAG_LEN)
        return false;
    raw[0] = VERSION;
    new_nonce(raw + 1);
    unsigned long long sealed = 0;
    crypto_aead_xchacha20poly1305_ietf_encrypt(raw + HEAD_LEN, &sealed, body, len, raw, 1, NULL,
                                               raw + 1, seal_key(secret));
    /* the nonce and the ciphertext are no secret: the table encoder, not libsodium's
     * constant-time one (core/base64url.h) */
    bd_base64url_encode(raw, HEAD_LEN + (size_t)sealed, out);
    return true;
}

void bd_token_encode(const uint8_t secret[BD_SECRET_LEN], const bd_token *t,
                     char out[BD_TOKEN_TEXT_MAX + 1])
{
    uint8_t body[BODY_MAX];
    uint8_t *p = body;
    size_t qlen = t->query_len <= BD_TOKEN_QUERY_MAX ? t->query_len : 0;
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
    *p++ = (uint8_t)(qlen & 0xff);
    *p++ = (uint8_t)(qlen >> 8);
    memcpy(p, t->query, qlen);
    bd_token_seal_bytes(secret, body, FIXED_LEN + 2 + qlen, out);
}

/* Whether an opened body of len bytes is one that version issues. */
static bool body_fits(uint8_t version, const uint8_t *body, size_t len)
{
    if (version == VERSION_WITHOUT_QUERY)
        return len == FIXED_LEN;
    if (len < FIXED_LEN + 2)
        return false;
    size_t qlen = body[FIXED_LEN] | (size_t)body[FIXED_LEN + 1] << 8;
    return qlen <= BD_TOKEN_QUERY_MAX && len == FIXED_LEN + 2 + qlen;
}

/* Base64 text -> opened body (its length in *len); MALFORMED or TAMPERED on failure. */
static bd_token_status open_token(const uint8_t secret[BD_SECRET_LEN], bd_slice text,
                                  uint8_t body[BODY_MAX], size_t *body_len)
{
    uint8_t raw[RAW_MAX + 1], opened[RAW_MAX];
    size_t n = 0;
    const char *end = NULL;
    if (text.len == 0 || text.len > BD_TOKEN_TEXT_MAX ||
        sodium_base642bin(raw, sizeof raw, text.ptr, text.len, NULL, &n, &end,
                          sodium_base64_VARIANT_URLSAFE_NO_PADDING) != 0 ||
        end != text.ptr + text.len || n < HEAD_LEN + TAG_LEN ||
        (raw[0] != VERSION && raw[0] != VERSION_WITHOUT_QUERY))
        return BD_TOKEN_MALFORMED;
    unsigned long long len = 0;
    int bad = crypto_aead_xchacha20poly1305_ietf_decrypt(opened, &len, NULL, raw + HEAD_LEN,
                                                         n - HEAD_LEN, raw, 1, raw + 1,
                                                         seal_key(secret));
    if (bad)
        return BD_TOKEN_TAMPERED;
    if (!body_fits(raw[0], opened, (size_t)len)) /* sealed by us, but never issued */
        return BD_TOKEN_MALFORMED;
    memcpy(body, opened, (size_t)len);
    *body_len = (size_t)len;
    return BD_TOKEN_OK;
}

bd_token_status bd_token_decode(const uint8_t secret[BD_SECRET_LEN], bd_slice text, int64_t now,
                                int64_t key_id, const uint8_t search[BD_SEARCH_DIGEST_LEN],
                                bd_token *t)
{
    uint8_t body[BODY_MAX];
    size_t len = 0;
    bd_token_status st = open_token(secret, text, body, &len);
    if (st != BD_TOKEN_OK)
        return st;
    const uint8_t *p = body;
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
    tok.query_len = len > FIXED_LEN ? len - FIXED_LEN - 2 : 0;
    memcpy(tok.query, body + len - tok.query_len, tok.query_len);
    if (tok.records_found < 0 || tok.after_id < 0)
        return BD_TOKEN_MALFORMED;
    /* Compared without subtracting the token's value: any int64 may come out of a seal. */
    if (tok.issued_at < now - BD_TOKEN_LIFETIME || tok.issued_at > now + 300)
        return BD_TOKEN_EXPIRED;
    if (tok.key_id != key_id)
        return BD_TOKEN_OTHER_KEY;
    if (search && sodium_memcmp(tok.search, search, BD_SEARCH_DIGEST_LEN) != 0)
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
