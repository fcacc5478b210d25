/* The search a breach-search paging token is bound to and carries (search_token.h). */
#include "v7/search_token.h"

#include <sodium.h>
#include <string.h>

/* Digest of everything that defines the search, so a token only continues its own. */
void bd_search_digest(const bd_record_query *q, uint8_t out[BD_SEARCH_DIGEST_LEN])
{
    crypto_generichash_state st;
    crypto_generichash_init(&st, NULL, 0, BD_SEARCH_DIGEST_LEN);
    uint8_t head[2] = {1, (uint8_t)q->field};
    crypto_generichash_update(&st, head, sizeof head);
    uint32_t len = (uint32_t)q->key.len;
    crypto_generichash_update(&st, (const uint8_t *)&len, sizeof len);
    crypto_generichash_update(&st, (const uint8_t *)q->key.ptr, q->key.len);
    for (int f = 0; f < BD_FIELD_COUNT; f++) {
        uint8_t mode = (uint8_t)q->filter[f].mode;
        if (f == BD_FIELD_WEBSITE_DOMAIN && mode == BD_FILTER_NONE)
            continue; /* the digest of a search without it is the one before it existed */
        crypto_generichash_update(&st, &mode, 1);
        if (q->filter[f].mode == BD_FILTER_EQUALS) {
            len = (uint32_t)q->filter[f].key.len;
            crypto_generichash_update(&st, (const uint8_t *)&len, sizeof len);
            crypto_generichash_update(&st, (const uint8_t *)q->filter[f].key.ptr,
                                      q->filter[f].key.len);
        }
    }
    crypto_generichash_final(&st, out, BD_SEARCH_DIGEST_LEN);
}

/* ---- the search a token carries --------------------------------------------------------
 * field(1) key_len(2) key, then per filter mode(1), and for an equality len(2) key. Lookup
 * keys are normalised values or keyed hashes, never a plaintext password or SSN; the token
 * is sealed, so the client cannot read them either. */

static bool put_bytes(bd_token *t, const void *p, size_t n)
{
    if (t->query_len + n > BD_TOKEN_QUERY_MAX)
        return false;
    memcpy(t->query + t->query_len, p, n);
    t->query_len += n;
    return true;
}

static bool put_key(bd_token *t, bd_slice k)
{
    uint8_t len[2] = {(uint8_t)(k.len & 0xff), (uint8_t)(k.len >> 8)};
    return k.len <= 0xffff && put_bytes(t, len, 2) && put_bytes(t, k.ptr, k.len);
}

/* Writes q into t->query; a search too large to carry leaves query_len 0 (every search
 * the parameters allow fits: the account and a username filter of 512 bytes each, and the
 * other value filters are short). */
void bd_search_carry(const bd_record_query *q, bd_token *t)
{
    uint8_t field = (uint8_t)q->field;
    t->query_len = 0;
    bool ok = put_bytes(t, &field, 1) && put_key(t, q->key);
    for (int f = 0; ok && f < BD_FIELD_COUNT; f++) {
        uint8_t mode = (uint8_t)q->filter[f].mode;
        ok = put_bytes(t, &mode, 1) &&
             (q->filter[f].mode != BD_FILTER_EQUALS || put_key(t, q->filter[f].key));
    }
    if (!ok)
        t->query_len = 0;
}

static bool take_key(const bd_token *t, size_t *at, bd_slice *k)
{
    if (*at + 2 > t->query_len)
        return false;
    size_t len = t->query[*at] | (size_t)t->query[*at + 1] << 8;
    *at += 2;
    if (len > t->query_len - *at)
        return false;
    *k = (bd_slice){(const char *)t->query + *at, len};
    *at += len;
    return true;
}

/* The search t carries into q (its keys point into t); false when it carries none. */
bool bd_search_carried(const bd_token *t, bd_record_query *q)
{
    size_t at = 1;
    if (t->query_len == 0 || t->query[0] >= BD_FIELD_COUNT || !take_key(t, &at, &q->key))
        return false;
    q->field = (bd_field)t->query[0];
    for (int f = 0; f < BD_FIELD_COUNT; f++) {
        if (f == BD_FIELD_WEBSITE_DOMAIN && at == t->query_len)
            break; /* a token written before website_domain: its filter is none */
        if (at >= t->query_len || t->query[at] > BD_FILTER_EQUALS)
            return false;
        q->filter[f].mode = (bd_filter_mode)t->query[at++];
        if (q->filter[f].mode == BD_FILTER_EQUALS && !take_key(t, &at, &q->filter[f].key))
            return false;
    }
    return at == t->query_len;
}
