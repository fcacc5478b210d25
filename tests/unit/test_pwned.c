/* ingest/pwned: the Pwned Passwords line parser, one line in, hash and count or the reason
 * out. */
#include "ingest/pwned.h"

#include <stdio.h>

#include "test.h"

/* "MODE HEX:COUNT" (hex of the whole hash), or "invalid: reason". */
static const char *parse(const char *line, int32_t prefix)
{
    static char out[128];
    bd_range_mode mode;
    uint8_t h[20];
    uint32_t count;
    const char *why = NULL;
    if (bd_pwned_parse_line(bd_slice_from(line), prefix, &mode, h, &count, &why) != BD_OK) {
        snprintf(out, sizeof out, "invalid: %s", why ? why : "(no reason)");
        return out;
    }
    size_t n = (size_t)snprintf(out, sizeof out, "%s ", mode == BD_RANGE_SHA1 ? "sha1" : "ntlm");
    for (size_t i = 0; i < (mode == BD_RANGE_SHA1 ? 20u : 16u); i++)
        n += (size_t)snprintf(out + n, sizeof out - n, "%02X", h[i]);
    snprintf(out + n, sizeof out - n, ":%u", count);
    return out;
}

TEST(test_whole_hash_lines_give_their_mode_by_length)
{
    CHECK_STR(parse("5BAA61E4C9B93F3F0682250B6CF8331B7EE68FD8:10437277", -1),
              "sha1 5BAA61E4C9B93F3F0682250B6CF8331B7EE68FD8:10437277");
    CHECK_STR(parse("8846f7eaee8fb117ad06bdd830b7586c:3\r", -1),
              "ntlm 8846F7EAEE8FB117AD06BDD830B7586C:3");
    CHECK_STR(parse("5BAA61E4C9B93F3F0682250B6CF8331B7EE68FD8:4294967295  ", -1),
              "sha1 5BAA61E4C9B93F3F0682250B6CF8331B7EE68FD8:4294967295");
}

TEST(test_per_prefix_lines_take_the_prefix_of_their_file)
{
    CHECK_STR(parse("1E4C9B93F3F0682250B6CF8331B7EE68FD8:2", 0x5BAA6),
              "sha1 5BAA61E4C9B93F3F0682250B6CF8331B7EE68FD8:2");
    CHECK_STR(parse("7EAEE8FB117AD06BDD830B7586C:9", 0x8846F),
              "ntlm 8846F7EAEE8FB117AD06BDD830B7586C:9");
    CHECK_STR(parse("5BAA61E4C9B93F3F0682250B6CF8331B7EE68FD8:2", 0x5BAA6),
              "invalid: the suffix is not 35 (SHA-1) or 27 (NTLM) hex digits");
}

TEST(test_bad_lines_say_why_without_quoting_the_line)
{
    CHECK_STR(parse("5BAA61E4C9B93F3F0682250B6CF8331B7EE68FD8", -1),
              "invalid: expected HASH:COUNT");
    CHECK_STR(parse("5BAA61E4C9B93F3F0682250B6CF8331B7EE68FD:1", -1),
              "invalid: the hash is not 40 (SHA-1) or 32 (NTLM) hex digits");
    CHECK_STR(parse("5BAA61E4C9B93F3F0682250B6CF8331B7EE68FDG:1", -1),
              "invalid: the hash is not hexadecimal");
    CHECK_STR(parse("5BAA61E4C9B93F3F0682250B6CF8331B7EE68FD8:", -1),
              "invalid: the count is missing");
    CHECK_STR(parse("5BAA61E4C9B93F3F0682250B6CF8331B7EE68FD8:-1", -1),
              "invalid: the count is not a whole number");
    CHECK_STR(parse("5BAA61E4C9B93F3F0682250B6CF8331B7EE68FD8:1 2", -1),
              "invalid: the count is not a whole number");
    CHECK_STR(parse("5BAA61E4C9B93F3F0682250B6CF8331B7EE68FD8:4294967296", -1),
              "invalid: the count is larger than 4294967295");
    CHECK_STR(parse("5BAA61E4C9B93F3F0682250B6CF8331B7EE68FD8:99999999999999999999999", -1),
              "invalid: the count is larger than 4294967295");
    CHECK_STR(parse("5BAA61E4C9B93F3F0682250B6CF8331B7EE68FD8:0", -1),
              "invalid: the count is 0 (a padding line)");
    CHECK_STR(parse(":", -1), "invalid: the hash is not 40 (SHA-1) or 32 (NTLM) hex digits");
}

int main(void)
{
    RUN(test_whole_hash_lines_give_their_mode_by_length);
    RUN(test_per_prefix_lines_take_the_prefix_of_their_file);
    RUN(test_bad_lines_say_why_without_quoting_the_line);
    return TEST_EXIT();
}
