/* Breach-search paging tokens: opaque, URL-safe, sealed (authenticated encryption) with a
 * key derived from the server secret.
 *
 * A token carries where the next page starts (the last record's sort key) and the total
 * counted on the first page, and binds the search that issued it (a digest of the type, the
 * normalised account and the filters) and the API key it was issued to. It expires
 * BD_TOKEN_LIFETIME seconds after issue. A client can neither read nor change anything in
 * it: not the issue time, the key id, the count or the internal row id. */
#ifndef BD_AUTH_TOKEN_H
#define BD_AUTH_TOKEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "auth/secret.h"
#include "core/result.h"
#include "core/slice.h"

#define BD_TOKEN_LIFETIME (24 * 3600)
#define BD_SEARCH_DIGEST_LEN 16
/* The search itself, in bytes the caller lays out, so that a token alone continues it. */
#define BD_TOKEN_QUERY_MAX 1280
#define BD_TOKEN_TEXT_MAX 1840 /* a token carrying BD_TOKEN_QUERY_MAX bytes of search */

typedef struct {
    int64_t issued_at; /* Unix seconds */
    int64_t key_id;
    uint8_t search[BD_SEARCH_DIGEST_LEN];
    int64_t records_found;
    int32_t after_date;
    int64_t after_id;
    size_t query_len; /* 0: the token does not carry its search (tokens before version 3) */
    uint8_t query[BD_TOKEN_QUERY_MAX];
} bd_token;

typedef enum {
    BD_TOKEN_OK,
    BD_TOKEN_MALFORMED, /* not a token of ours at all */
    BD_TOKEN_TAMPERED,  /* well-formed, but the signature does not match */
    BD_TOKEN_EXPIRED,
    BD_TOKEN_OTHER_KEY,
    BD_TOKEN_OTHER_SEARCH,
} bd_token_status;

/* Writes the token text (NUL-terminated, at most BD_TOKEN_TEXT_MAX bytes). A query_len past
 * BD_TOKEN_QUERY_MAX is written as 0 (the token then does not carry its search). */
void bd_token_encode(const uint8_t secret[BD_SECRET_LEN], const bd_token *t,
                     char out[BD_TOKEN_TEXT_MAX + 1]);
/* Seals arbitrary bytes as a token text, as bd_token_encode seals a token's fields: for
 * tests and fuzzing the decoder behind the seal. false when len is too long for a token. */
bool bd_token_seal_bytes(const uint8_t secret[BD_SECRET_LEN], const uint8_t *body, size_t len,
                         char out[BD_TOKEN_TEXT_MAX + 1]);
/* Checks a presented token against the secret, the clock, the requesting key and the
 * search; fills *t only when the result is BD_TOKEN_OK. search NULL: the caller has no
 * search of its own and continues the one the token carries (t->query), so only the seal,
 * the clock and the key are checked. */
bd_token_status bd_token_decode(const uint8_t secret[BD_SECRET_LEN], bd_slice text, int64_t now,
                                int64_t key_id, const uint8_t search[BD_SEARCH_DIGEST_LEN],
                                bd_token *t);
/* A sentence for each status, for 422 messages. */
const char *bd_token_status_message(bd_token_status s);

#endif
