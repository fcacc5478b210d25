/* UUID canonical forms. */
#include "core/uuid.h"
#include "test.h"

TEST(test_uuid_canonical_lowercases_and_checks_shape)
{
    char out[37];
    CHECK(bd_uuid_canonical(bd_slice_from("3F2B8C1E-0D4A-4E1B-9C7D-2A5E6F708192"), out));
    CHECK_STR(out, "3f2b8c1e-0d4a-4e1b-9c7d-2a5e6f708192");
    CHECK(!bd_uuid_canonical(bd_slice_from("3f2b8c1e0d4a4e1b9c7d2a5e6f708192"), out));
    CHECK(!bd_uuid_canonical(bd_slice_from("3f2b8c1e-0d4a-4e1b-9c7d-2a5e6f70819g"), out));
    CHECK(!bd_uuid_canonical(bd_slice_from("3f2b8c1e-0d4a-4e1b-9c7d-2a5e6f7081921"), out));
    CHECK(!bd_uuid_canonical((bd_slice){"3f2b8c1e-0d4a-4e1b-9c7d-2a5e6f70819\0", 36}, out));
}

TEST(test_uuid_from_bytes_sets_version_4_and_variant)
{
    uint8_t b[16];
    char out[37];
    for (int i = 0; i < 16; i++)
        b[i] = 0xff;
    bd_uuid_from_bytes(b, out);
    CHECK_STR(out, "ffffffff-ffff-4fff-bfff-ffffffffffff");
    for (int i = 0; i < 16; i++)
        b[i] = 0;
    bd_uuid_from_bytes(b, out);
    CHECK_STR(out, "00000000-0000-4000-8000-000000000000");
}

int main(void)
{
    RUN(test_uuid_canonical_lowercases_and_checks_shape);
    RUN(test_uuid_from_bytes_sets_version_4_and_variant);
    return TEST_EXIT();
}
