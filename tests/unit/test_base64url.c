/* The fast base64url encoder writes exactly what libsodium's constant-time one writes
 * (URL-safe alphabet, no padding), whatever the length and the bytes, and what RFC 4648's
 * test vectors say. */
#include <sodium.h>
#include <string.h>

#include "core/base64url.h"
#include "test.h"

TEST(test_base64url_rfc4648_vectors)
{
    static const char *const plain[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
    static const char *const coded[] = {"", "Zg", "Zm8", "Zm9v", "Zm9vYg", "Zm9vYmE", "Zm9vYmFy"};
    for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++) {
        char out[16];
        size_t n = bd_base64url_encode((const uint8_t *)plain[i], strlen(plain[i]), out);
        CHECK_STR(out, coded[i]);
        CHECK_INT(n, strlen(coded[i]));
        CHECK_INT(BD_BASE64URL_LEN(strlen(plain[i])), strlen(coded[i]));
    }
}

TEST(test_base64url_matches_libsodium_at_every_length)
{
    uint8_t in[300];
    randombytes_buf(in, sizeof in);
    in[0] = 0xfb; /* the two characters that differ from plain base64: '-' and '_' */
    in[1] = 0xff;
    for (size_t n = 0; n <= sizeof in; n++) {
        char ours[BD_BASE64URL_LEN(sizeof in) + 1], theirs[BD_BASE64URL_LEN(sizeof in) + 1];
        size_t len = bd_base64url_encode(in, n, ours);
        sodium_bin2base64(theirs, sizeof theirs, in, n, sodium_base64_VARIANT_URLSAFE_NO_PADDING);
        CHECK_STR(ours, theirs);
        CHECK_INT(len, strlen(theirs));
        CHECK_INT(len, BD_BASE64URL_LEN(n));
    }
}

int main(void)
{
    if (sodium_init() < 0)
        return 1;
    RUN(test_base64url_rfc4648_vectors);
    RUN(test_base64url_matches_libsodium_at_every_length);
    return TEST_EXIT();
}
