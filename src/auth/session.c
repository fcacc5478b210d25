/* Console session cookies (session.h). */
#include "auth/session.h"

#include <sodium.h>
#include <string.h>

#define VERSION 1
#define NONCE_LEN crypto_aead_xchacha20poly1305_ietf_NPUBBYTES
#define TAG_LEN crypto_aead_xchacha20poly1305_ietf_ABYTES
#define HEAD_LEN (1 + NONCE_LEN)
#define FIXED_LEN (BD_SESSION_ID_LEN + 8 + 8 + 1)
#define BODY_MAX (FIXED_LEN + BD_SESSION_KEY_MAX)
#define RAW_MAX (HEAD_LEN + BODY_MAX + TAG_LEN)

_Static_assert(((RAW_MAX + 2) / 3) * 4 <= BD_SESSION_TEXT_MAX, "session text room");
_Static_assert(BD_MAC_LEN == crypto_aead_xchacha20poly1305_ietf_KEYBYTES, "seal key size");
_Static_assert(BD_SESSION_KEY_MAX <= 255, "key length in one byte");

static void put64(uint8_t *p, int64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)((uint64_t)v >> (8 * i));
}

static int64_t get64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return (int64_t)v;
}

/* A key of its own: a paging token is never a session, nor the other way round. */
static void seal_key(const uint8_t secret[BD_SECRET_LEN], uint8_t key[BD_MAC_LEN])
{
    bd_keyed_hash(secret, "console-session-seal", "", 0, key);
}

bool bd_session_new(bd_session *s, bd_slice key, int64_t now)
{
    memset(s, 0, sizeof *s);
    if (key.len == 0 || key.len > BD_SESSION_KEY_MAX)
        return false;
    randombytes_buf(s->id, sizeof s->id);
    s->issued_at = s->seen_at = now;
    s->key_len = key.len;
    memcpy(s->key, key.ptr, key.len);
    return true;
}

void bd_session_seal(const uint8_t secret[BD_SECRET_LEN], const bd_session *s,
                     char out[BD_SESSION_TEXT_MAX + 1])
{
    uint8_t body[BODY_MAX], raw[RAW_MAX], key[BD_MAC_LEN];
    uint8_t *p = body;
    memcpy(p, s->id, BD_SESSION_ID_LEN);
    p += BD_SESSION_ID_LEN;
    put64(p, s->issued_at);
    p += 8;
    put64(p, s->seen_at);
    p += 8;
    size_t kl = s->key_len <= BD_SESSION_KEY_MAX ? s->key_len : 0;
    *p++ = (uint8_t)kl;
    memcpy(p, s->key, kl);
    raw[0] = VERSION;
    randombytes_buf(raw + 1, NONCE_LEN);
    seal_key(secret, key);
    unsigned long long sealed = 0;
    crypto_aead_xchacha20poly1305_ietf_encrypt(raw + HEAD_LEN, &sealed, body, FIXED_LEN + kl, raw,
                                               1, NULL, raw + 1, key);
    sodium_memzero(key, sizeof key);
    sodium_memzero(body, sizeof body);
    sodium_bin2base64(out, BD_SESSION_TEXT_MAX + 1, raw, HEAD_LEN + (size_t)sealed,
                      sodium_base64_VARIANT_URLSAFE_NO_PADDING);
}

bd_session_status bd_session_open(const uint8_t secret[BD_SECRET_LEN], bd_slice text,
                                  int64_t now, bd_session *s)
{
    uint8_t raw[RAW_MAX + 1], body[BODY_MAX], key[BD_MAC_LEN];
    size_t n = 0;
    const char *end = NULL;
    if (text.len == 0 || text.len > BD_SESSION_TEXT_MAX ||
        sodium_base642bin(raw, sizeof raw, text.ptr, text.len, NULL, &n, &end,
                          sodium_base64_VARIANT_URLSAFE_NO_PADDING) != 0 ||
        end != text.ptr + text.len || n < HEAD_LEN + TAG_LEN + FIXED_LEN || raw[0] != VERSION)
        return BD_SESSION_BAD;
    unsigned long long len = 0;
    seal_key(secret, key);
    int bad = crypto_aead_xchacha20poly1305_ietf_decrypt(body, &len, NULL, raw + HEAD_LEN,
                                                         n - HEAD_LEN, raw, 1, raw + 1, key);
    sodium_memzero(key, sizeof key);
    if (bad || len < FIXED_LEN || len != (unsigned long long)FIXED_LEN + body[FIXED_LEN - 1] ||
        body[FIXED_LEN - 1] == 0) {
        sodium_memzero(body, sizeof body);
        return BD_SESSION_BAD;
    }
    bd_session t;
    memcpy(t.id, body, BD_SESSION_ID_LEN);
    t.issued_at = get64(body + BD_SESSION_ID_LEN);
    t.seen_at = get64(body + BD_SESSION_ID_LEN + 8);
    t.key_len = body[FIXED_LEN - 1];
    memcpy(t.key, body + FIXED_LEN, t.key_len);
    sodium_memzero(body, sizeof body);
    bd_session_status st = BD_SESSION_OK;
    if (now - t.seen_at > BD_SESSION_IDLE || now - t.issued_at > BD_SESSION_MAX ||
        t.seen_at > now + 300 || t.issued_at > t.seen_at)
        st = BD_SESSION_EXPIRED;
    else
        *s = t;
    sodium_memzero(&t, sizeof t);
    return st;
}

void bd_session_id_text(const bd_session *s, char out[2 * BD_SESSION_ID_LEN + 1])
{
    sodium_bin2hex(out, 2 * BD_SESSION_ID_LEN + 1, s->id, BD_SESSION_ID_LEN);
}

void bd_session_csrf(const uint8_t secret[BD_SECRET_LEN], const bd_session *s,
                     char out[BD_SESSION_CSRF_LEN + 1])
{
    uint8_t mac[BD_MAC_LEN];
    bd_keyed_hash(secret, "console-csrf", s->id, BD_SESSION_ID_LEN, mac);
    sodium_bin2hex(out, BD_SESSION_CSRF_LEN + 1, mac, BD_SESSION_CSRF_LEN / 2);
}

bool bd_session_csrf_ok(const uint8_t secret[BD_SECRET_LEN], const bd_session *s,
                        bd_slice presented)
{
    char want[BD_SESSION_CSRF_LEN + 1];
    bd_session_csrf(secret, s, want);
    return presented.len == BD_SESSION_CSRF_LEN &&
           sodium_memcmp(want, presented.ptr, BD_SESSION_CSRF_LEN) == 0;
}
