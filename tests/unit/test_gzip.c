/* gzip replies: Accept-Encoding negotiation and a compressed reply that inflates back. */
#include <string.h>
#include <zlib.h>

#include "http/gzip.h"
#include "test.h"

TEST(test_gzip_accepted_follows_q_values)
{
    CHECK(!bd_gzip_accepted(NULL));
    CHECK(!bd_gzip_accepted(""));
    CHECK(bd_gzip_accepted("gzip"));
    CHECK(bd_gzip_accepted("GZip"));
    CHECK(bd_gzip_accepted("x-gzip"));
    CHECK(bd_gzip_accepted("gzip, deflate, br"));
    CHECK(bd_gzip_accepted("br;q=1.0, gzip;q=0.8, *;q=0.1"));
    CHECK(bd_gzip_accepted(" deflate ,  gzip ; q=0.5"));
    CHECK(!bd_gzip_accepted("gzip;q=0"));
    CHECK(!bd_gzip_accepted("gzip;q=0.000"));
    CHECK(!bd_gzip_accepted("deflate, br"));
    CHECK(!bd_gzip_accepted("identity"));
    CHECK(!bd_gzip_accepted("gzipx"));
    CHECK(bd_gzip_accepted("*"));
    CHECK(!bd_gzip_accepted("*;q=0"));
    CHECK(!bd_gzip_accepted("gzip;q=0, *"));  /* gzip named: its own q decides */
    CHECK(!bd_gzip_accepted("gzip;q=2"));     /* malformed q: not accepted */
    CHECK(!bd_gzip_accepted("gzip;q=0.1234"));
}

TEST(test_gzip_compress_inflates_back_and_reuses_the_stream)
{
    bd_gzip *g = bd_gzip_new();
    CHECK(g != NULL);
    bd_buf out;
    bd_buf_init(&out, 1 << 20);
    char in[8192];
    for (size_t i = 0; i < sizeof in; i++)
        in[i] = "{\"email\":\"a@example.com\"},"[i % 26];
    for (int round = 0; round < 2; round++) {
        CHECK_INT(bd_gzip_compress(g, (bd_slice){in, sizeof in}, &out), BD_OK);
        CHECK(out.len > 18 && out.len < sizeof in / 4);
        CHECK_INT((unsigned char)out.data[0], 0x1f);
        CHECK_INT((unsigned char)out.data[1], 0x8b);
        z_stream z;
        memset(&z, 0, sizeof z);
        CHECK_INT(inflateInit2(&z, 15 + 16), Z_OK);
        char back[sizeof in + 16];
        z.next_in = (Bytef *)out.data;
        z.avail_in = (uInt)out.len;
        z.next_out = (Bytef *)back;
        z.avail_out = sizeof back;
        CHECK_INT(inflate(&z, Z_FINISH), Z_STREAM_END);
        CHECK_INT((long)z.total_out, (long)sizeof in);
        CHECK(memcmp(back, in, sizeof in) == 0);
        inflateEnd(&z);
    }
    bd_buf_free(&out);
    bd_gzip_free(g);
}

TEST(test_gzip_compress_refuses_an_output_past_its_cap)
{
    bd_gzip *g = bd_gzip_new();
    bd_buf out;
    bd_buf_init(&out, 64);
    unsigned char in[4096];
    uint32_t x = 12345;
    for (size_t i = 0; i < sizeof in; i++) { /* incompressible */
        x = x * 1103515245u + 12345u;
        in[i] = (unsigned char)(x >> 24);
    }
    CHECK(bd_gzip_compress(g, (bd_slice){(const char *)in, sizeof in}, &out) != BD_OK);
    bd_buf_free(&out);
    bd_gzip_free(g);
}

int main(void)
{
    RUN(test_gzip_accepted_follows_q_values);
    RUN(test_gzip_compress_inflates_back_and_reuses_the_stream);
    RUN(test_gzip_compress_refuses_an_output_past_its_cap);
    return TEST_EXIT();
}
