/* core/sha256: the digests and MACs are the published ones (FIPS 180-2's examples, RFC 4231's
 * HMAC-SHA-256 cases), whatever instructions nettle picks on this CPU, so that stores whose
 * dedup keys and keyed hashes were written with libsodium's implementation keep matching. */
#include "core/sha256.h"

#include <stdio.h>
#include <string.h>

#include "test.h"

static const char *hex(const uint8_t *h)
{
    static char out[2 * BD_SHA256_LEN + 1];
    for (size_t i = 0; i < BD_SHA256_LEN; i++)
        snprintf(out + 2 * i, 3, "%02x", h[i]);
    return out;
}

TEST(test_sha256_of_the_published_examples)
{
    uint8_t h[BD_SHA256_LEN];
    bd_sha256("abc", 3, h);
    CHECK_STR(hex(h), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    bd_sha256("", 0, h);
    CHECK_STR(hex(h), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    const char two_blocks[] = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    bd_sha256(two_blocks, sizeof two_blocks - 1, h);
    CHECK_STR(hex(h), "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

/* A million 'a' fed in uneven pieces: updates that straddle block boundaries. */
TEST(test_sha256_in_pieces_equals_the_whole)
{
    static char a[1000000];
    memset(a, 'a', sizeof a);
    bd_sha256_state st;
    bd_sha256_init(&st);
    size_t done = 0, step = 1;
    while (done < sizeof a) {
        size_t n = step < sizeof a - done ? step : sizeof a - done;
        bd_sha256_update(&st, a + done, n);
        done += n;
        step = step * 3 % 1009 + 1;
    }
    uint8_t h[BD_SHA256_LEN];
    bd_sha256_final(&st, h);
    CHECK_STR(hex(h), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(test_hmac_sha256_of_rfc_4231)
{
    uint8_t key[131], mac[BD_SHA256_LEN];
    bd_hmac_sha256_state st;
    memset(key, 0x0b, 20); /* case 1 */
    bd_hmac_sha256_init(&st, key, 20);
    bd_hmac_sha256_update(&st, "Hi There", 8);
    bd_hmac_sha256_final(&st, mac);
    CHECK_STR(hex(mac), "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
    bd_hmac_sha256_init(&st, "Jefe", 4); /* case 2 */
    bd_hmac_sha256_update(&st, "what do ya want ", 16);
    bd_hmac_sha256_update(&st, "for nothing?", 12);
    bd_hmac_sha256_final(&st, mac);
    CHECK_STR(hex(mac), "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    memset(key, 0xaa, sizeof key); /* case 6: a key longer than a block is hashed first */
    bd_hmac_sha256_init(&st, key, sizeof key);
    const char msg[] = "Test Using Larger Than Block-Size Key - Hash Key First";
    bd_hmac_sha256_update(&st, msg, sizeof msg - 1);
    bd_hmac_sha256_final(&st, mac);
    CHECK_STR(hex(mac), "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

/* After a MAC the state is keyed again; a copy of a keyed state forks it. */
TEST(test_hmac_sha256_state_is_keyed_again_and_copies_fork)
{
    bd_hmac_sha256_state keyed, st;
    uint8_t mac[BD_SHA256_LEN];
    bd_hmac_sha256_init(&keyed, "Jefe", 4);
    st = keyed;
    bd_hmac_sha256_update(&st, "what do ya want for nothing?", 28);
    bd_hmac_sha256_final(&st, mac);
    CHECK_STR(hex(mac), "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    bd_hmac_sha256_update(&st, "what do ya want for nothing?", 28);
    bd_hmac_sha256_final(&st, mac);
    CHECK_STR(hex(mac), "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    bd_hmac_sha256_update(&keyed, "what do ya want for nothing?", 28);
    bd_hmac_sha256_final(&keyed, mac);
    CHECK_STR(hex(mac), "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

int main(void)
{
    RUN(test_sha256_of_the_published_examples);
    RUN(test_sha256_in_pieces_equals_the_whole);
    RUN(test_hmac_sha256_of_rfc_4231);
    RUN(test_hmac_sha256_state_is_keyed_again_and_copies_fork);
    return TEST_EXIT();
}
