/* core/pwhash: SHA-1 and NTLM of passwords, against independent values (NTLM's from
 * `iconv -t utf-16le | openssl dgst -md4`). */
#include "core/pwhash.h"

#include <stdio.h>

#include "test.h"

static const char *hex(const uint8_t *h, size_t n)
{
    static char out[41];
    for (size_t i = 0; i < n; i++)
        snprintf(out + 2 * i, 3, "%02X", h[i]);
    return out;
}

static const char *sha1(const char *pw, size_t n)
{
    uint8_t h[BD_SHA1_LEN];
    bd_pw_sha1((bd_slice){pw, n}, h);
    return hex(h, sizeof h);
}

static const char *ntlm(const char *pw, size_t n)
{
    uint8_t h[BD_NTLM_LEN];
    bd_pw_ntlm((bd_slice){pw, n}, h);
    return hex(h, sizeof h);
}

TEST(test_sha1_of_password_is_the_published_one)
{
    CHECK_STR(sha1("password", 8), "5BAA61E4C9B93F3F0682250B6CF8331B7EE68FD8");
    CHECK_STR(sha1("", 0), "DA39A3EE5E6B4B0D3255BFEF95601890AFD80709");
}

TEST(test_ntlm_of_password_is_the_published_one)
{
    CHECK_STR(ntlm("password", 8), "8846F7EAEE8FB117AD06BDD830B7586C");
    CHECK_STR(ntlm("", 0), "31D6CFE0D16AE931B73C59D7E0C089C0");
}

TEST(test_ntlm_encodes_code_points_past_the_bmp_as_surrogate_pairs)
{
    const char pw[] = "\xc3\x9c\xe2\x82\xac\xf0\x9f\x98\x80x"; /* Ü € 😀 x */
    CHECK_STR(ntlm(pw, sizeof pw - 1), "A2F595FC09A02E1DD1E81F679639B663");
}

TEST(test_ntlm_hashes_a_byte_outside_utf8_as_the_replacement_character)
{
    CHECK_STR(ntlm("\xff"
                   "a",
                   2),
              "01ADA9EC584A4CFD9C8C55C1E646614E");
}

TEST(test_ntlm_of_a_password_longer_than_its_buffer_hashes_all_of_it)
{
    char pw[1000];
    memset(pw, 'a', sizeof pw);
    CHECK_STR(ntlm(pw, sizeof pw), "258B48029DE2AD0107E1BFA9C86747F4");
}

int main(void)
{
    RUN(test_sha1_of_password_is_the_published_one);
    RUN(test_ntlm_of_password_is_the_published_one);
    RUN(test_ntlm_encodes_code_points_past_the_bmp_as_surrogate_pairs);
    RUN(test_ntlm_hashes_a_byte_outside_utf8_as_the_replacement_character);
    RUN(test_ntlm_of_a_password_longer_than_its_buffer_hashes_all_of_it);
    return TEST_EXIT();
}
