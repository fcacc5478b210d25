/* Keyed hashes: known answers (computed with Python's hmac module), and secrets that
 * change between calls on one thread. */
#include "auth/secret.h"

#include <sodium.h>
#include <string.h>

#include "test.h"

static void hex(const uint8_t *p, size_t n, char *out)
{
    sodium_bin2hex(out, 2 * n + 1, p, n);
}

TEST(test_keyed_hash_is_hmac_sha256_of_label_nul_data)
{
    uint8_t a[BD_SECRET_LEN], b[BD_SECRET_LEN], mac[BD_MAC_LEN];
    char text[2 * BD_MAC_LEN + 1];
    for (int i = 0; i < BD_SECRET_LEN; i++) {
        a[i] = (uint8_t)i;
        b[i] = (uint8_t)(0xff - i);
    }
    /* alternating secrets on one thread: a cached key schedule must follow the secret */
    for (int round = 0; round < 3; round++) {
        bd_keyed_hash(a, "password", "hunter2", 7, mac);
        hex(mac, sizeof mac, text);
        CHECK_STR(text, "505b3660eb3deecaca72255ae6c408ff963b1c42686b2f822bb9989037eb3f30");
        bd_keyed_hash(b, "password", "hunter2", 7, mac);
        hex(mac, sizeof mac, text);
        CHECK_STR(text, "2d4be3093d6258d231404a13e12861223c1ffb625347ea968e3c4fa3a710a9a8");
        bd_keyed_hash(a, "ssn", "", 0, mac);
        hex(mac, sizeof mac, text);
        CHECK_STR(text, "83a91818b211ae38db6ada229057f8b0eee4c37cc52270e1147fa5f041acc8bf");
    }
    /* a secret changed in place, at the same address */
    uint8_t c[BD_SECRET_LEN];
    memcpy(c, a, sizeof c);
    bd_keyed_hash(c, "password", "hunter2", 7, mac);
    memcpy(c, b, sizeof c);
    bd_keyed_hash(c, "password", "hunter2", 7, mac);
    hex(mac, sizeof mac, text);
    CHECK_STR(text, "2d4be3093d6258d231404a13e12861223c1ffb625347ea968e3c4fa3a710a9a8");
}

/* A CVV's keyed hash is the keyed hash of its digits under the label "cvv": apart from
 * every other kind of value, and "0123" is not "123". */
TEST(test_cvv_key_is_the_keyed_hash_of_its_digits)
{
    uint8_t secret[BD_SECRET_LEN], mac[BD_MAC_LEN], want[BD_MAC_LEN];
    memset(secret, 7, sizeof secret);
    bd_cvv_key(secret, BD_SLICE_LIT("123"), mac);
    bd_keyed_hash(secret, "cvv", "123", 3, want);
    CHECK(memcmp(mac, want, sizeof mac) == 0);
    bd_keyed_hash(secret, "ssn", "123", 3, want);
    CHECK(memcmp(mac, want, sizeof mac) != 0);
    bd_cvv_key(secret, BD_SLICE_LIT("0123"), want);
    CHECK(memcmp(mac, want, sizeof mac) != 0);
}

int main(void)
{
    if (sodium_init() < 0)
        return 1;
    RUN(test_keyed_hash_is_hmac_sha256_of_label_nul_data);
    RUN(test_cvv_key_is_the_keyed_hash_of_its_digits);
    return TEST_EXIT();
}
