/* PostgreSQL's byte-string hash, held to what PostgreSQL 15 itself returns: hashtext() of
 * strings of every tail length (0-11 bytes past the 12-byte blocks) and uuid_hash() of the
 * uuids that Citus's worker_hash() gave the same values for. */
#include <stdint.h>
#include <string.h>

#include "store/pg/hash_bytes.h"
#include "test.h"

TEST(test_pg_hash_bytes_equals_postgresql_hashtext_at_every_length)
{
    static const struct {
        const char *s;
        int32_t want; /* SELECT hashtext(s) */
    } CASES[] = {
        {"", -1477818771},
        {"a", 1075015857},
        {"ab", 1718550461},
        {"abc", -785388649},
        {"abcd", -393934804},
        {"abcde", -445659580},
        {"abcdef", -1747460160},
        {"abcdefg", 501636814},
        {"abcdefgh", -1960928205},
        {"abcdefghi", -92131489},
        {"abcdefghij", 1948051852},
        {"abcdefghijk", -1483803693},
        {"abcdefghijkl", -1586087212},
        {"abcdefghijklm", 405849808},
        {"abcdefghijklmnopqrstuvwx", 1251586959},
        {"abcdefghijklmnopqrstuvwxyz0", -1923549396},
    };
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++)
        CHECK_INT(pg_hash_bytes(CASES[i].s, strlen(CASES[i].s)), CASES[i].want);
}

TEST(test_pg_hash_bytes_of_a_uuid_is_citus_worker_hash)
{
    static const struct {
        uint8_t u[16];
        int32_t want; /* SELECT worker_hash(u), uuid_hash(u): the same */
    } CASES[] = {
        {{0xf7, 0xc3, 0x50, 0xf9, 0x18, 0x3b, 0x91, 0x25, 0xc3, 0x16, 0x90, 0xc7, 0x1f, 0x66, 0x2c,
          0x73},
         -840014513},
        {{0}, 1353656403},
        {{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
          0xff},
         -682383255},
        {{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, -476667580},
    };
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++)
        CHECK_INT(pg_hash_bytes(CASES[i].u, 16), CASES[i].want);
}

int main(void)
{
    RUN(test_pg_hash_bytes_equals_postgresql_hashtext_at_every_length);
    RUN(test_pg_hash_bytes_of_a_uuid_is_citus_worker_hash);
    return TEST_EXIT();
}
