/* Console session cookies (auth/session.h): round trip, tampering, idle and absolute expiry,
 * another secret, a paging token offered as a session, and the CSRF token. */
#include <sodium.h>
#include <string.h>

#include "auth/session.h"
#include "auth/token.h"
#include "test.h"

static uint8_t SECRET[BD_SECRET_LEN];
#define T0 1800000000
#define KEY "bd_TestKeyTestKeyTestKeyTestKeyTestKey0123"

static bd_session_status open_at(const char *text, int64_t now, bd_session *out)
{
    return bd_session_open(SECRET, bd_slice_from(text), now, out);
}

TEST(round_trip)
{
    bd_session s, o;
    CHECK(bd_session_new(&s, bd_slice_from(KEY), T0));
    char text[BD_SESSION_TEXT_MAX + 1];
    bd_session_seal(SECRET, &s, text);
    CHECK(strstr(text, "TestKey") == NULL); /* the key is sealed, not readable */
    CHECK_INT(open_at(text, T0 + 10, &o), BD_SESSION_OK);
    CHECK_INT(o.key_len, strlen(KEY));
    CHECK(memcmp(o.key, KEY, o.key_len) == 0);
    CHECK(memcmp(o.id, s.id, BD_SESSION_ID_LEN) == 0);
    CHECK_INT(o.issued_at, T0);
    CHECK_INT(o.seen_at, T0);
}

TEST(ids_differ)
{
    bd_session a, b;
    CHECK(bd_session_new(&a, bd_slice_from(KEY), T0));
    CHECK(bd_session_new(&b, bd_slice_from(KEY), T0));
    CHECK(memcmp(a.id, b.id, BD_SESSION_ID_LEN) != 0);
    char ta[2 * BD_SESSION_ID_LEN + 1];
    bd_session_id_text(&a, ta);
    CHECK_INT(strlen(ta), 32);
}

TEST(expiry)
{
    bd_session s, o;
    CHECK(bd_session_new(&s, bd_slice_from(KEY), T0));
    char text[BD_SESSION_TEXT_MAX + 1];
    bd_session_seal(SECRET, &s, text);
    CHECK_INT(open_at(text, T0 + BD_SESSION_IDLE, &o), BD_SESSION_OK);
    CHECK_INT(open_at(text, T0 + BD_SESSION_IDLE + 1, &o), BD_SESSION_EXPIRED);
    /* used a minute ago: idle counts from then, but not past the absolute limit */
    s.seen_at = T0 + BD_SESSION_MAX - 60;
    bd_session_seal(SECRET, &s, text);
    CHECK_INT(open_at(text, T0 + BD_SESSION_MAX, &o), BD_SESSION_OK);
    CHECK_INT(open_at(text, T0 + BD_SESSION_MAX + 1, &o), BD_SESSION_EXPIRED);
}

TEST(tampered_and_foreign)
{
    bd_session s, o;
    CHECK(bd_session_new(&s, bd_slice_from(KEY), T0));
    char text[BD_SESSION_TEXT_MAX + 1];
    bd_session_seal(SECRET, &s, text);
    size_t n = strlen(text);
    text[n / 2] = text[n / 2] == 'A' ? 'B' : 'A';
    CHECK_INT(open_at(text, T0, &o), BD_SESSION_BAD);
    CHECK_INT(open_at("", T0, &o), BD_SESSION_BAD);
    CHECK_INT(open_at("not a cookie!", T0, &o), BD_SESSION_BAD);
    /* another store's secret */
    uint8_t other[BD_SECRET_LEN];
    memcpy(other, SECRET, sizeof other);
    other[0] ^= 1;
    bd_session_seal(other, &s, text);
    CHECK_INT(open_at(text, T0, &o), BD_SESSION_BAD);
    /* a paging token under the same secret is not a session */
    bd_token t = {.issued_at = T0, .key_id = 1};
    char tok[BD_TOKEN_TEXT_MAX + 1];
    bd_token_encode(SECRET, &t, tok);
    CHECK_INT(open_at(tok, T0, &o), BD_SESSION_BAD);
}

TEST(long_keys_refused)
{
    char big[BD_SESSION_KEY_MAX + 2];
    memset(big, 'k', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    bd_session s;
    CHECK(!bd_session_new(&s, bd_slice_from(big), T0));
    CHECK(!bd_session_new(&s, bd_slice_from(""), T0));
    big[BD_SESSION_KEY_MAX] = '\0';
    CHECK(bd_session_new(&s, bd_slice_from(big), T0));
    char text[BD_SESSION_TEXT_MAX + 1];
    bd_session_seal(SECRET, &s, text);
    bd_session o;
    CHECK_INT(open_at(text, T0, &o), BD_SESSION_OK);
    CHECK_INT(o.key_len, BD_SESSION_KEY_MAX);
}

TEST(csrf)
{
    bd_session a, b;
    CHECK(bd_session_new(&a, bd_slice_from(KEY), T0));
    CHECK(bd_session_new(&b, bd_slice_from(KEY), T0));
    char ca[BD_SESSION_CSRF_LEN + 1], cb[BD_SESSION_CSRF_LEN + 1];
    bd_session_csrf(SECRET, &a, ca);
    bd_session_csrf(SECRET, &b, cb);
    CHECK_INT(strlen(ca), BD_SESSION_CSRF_LEN);
    CHECK(strcmp(ca, cb) != 0);
    CHECK(bd_session_csrf_ok(SECRET, &a, bd_slice_from(ca)));
    CHECK(!bd_session_csrf_ok(SECRET, &a, bd_slice_from(cb)));
    CHECK(!bd_session_csrf_ok(SECRET, &a, bd_slice_from("")));
    ca[5] = ca[5] == '0' ? '1' : '0';
    CHECK(!bd_session_csrf_ok(SECRET, &a, bd_slice_from(ca)));
}

int main(void)
{
    if (sodium_init() < 0)
        return 1;
    randombytes_buf(SECRET, sizeof SECRET);
    RUN(round_trip);
    RUN(ids_differ);
    RUN(expiry);
    RUN(tampered_and_foreign);
    RUN(long_keys_refused);
    RUN(csrf);
    return TEST_EXIT();
}
