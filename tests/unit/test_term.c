/* Tests for terminal-safe output: what passes unchanged and what is shown as \xNN. */
#include "core/term.h"

#include <stdlib.h>

#include "test.h"

static char out[1024];

/* Runs bd_term_write on s[0..n) and leaves what it wrote, NUL-terminated, in out. */
static const char *shown(const char *s, size_t n)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) {
        TEST_FAIL("open_memstream failed");
        return "";
    }
    CHECK_INT(bd_term_write(f, s, n), 0);
    fclose(f);
    snprintf(out, sizeof out, "%s", buf);
    free(buf);
    return out;
}

#define SHOWN(lit) shown(lit, sizeof(lit) - 1)

TEST(test_printable_ascii_passes_unchanged)
{
    CHECK_STR(SHOWN("Beta Shop 2024 (#1) ~!\\\"'"), "Beta Shop 2024 (#1) ~!\\\"'");
    CHECK_STR(SHOWN(""), "");
}

TEST(test_valid_utf8_passes_unchanged)
{
    CHECK_STR(SHOWN("Zoë Pässwörd 秘密 🔑"), "Zoë Pässwörd 秘密 🔑");
    CHECK_STR(SHOWN("\xc2\xa0\xdf\xbf\xe0\xa0\x80\xef\xbf\xbd\xf0\x90\x80\x80\xf4\x8f\xbf\xbf"),
              "\xc2\xa0\xdf\xbf\xe0\xa0\x80\xef\xbf\xbd\xf0\x90\x80\x80\xf4\x8f\xbf\xbf");
}

TEST(test_c0_controls_and_del_are_escaped)
{
    CHECK_STR(SHOWN("a\x1b]0;pwned\x07z"), "a\\x1b]0;pwned\\x07z");
    CHECK_STR(SHOWN("\x1b[2J\x1b[H"), "\\x1b[2J\\x1b[H");
    CHECK_STR(SHOWN("tab\there\nnew\rline\x7f"), "tab\\x09here\\x0anew\\x0dline\\x7f");
    CHECK_STR(shown("nul\0byte", 8), "nul\\x00byte");
    CHECK_STR(SHOWN("\x01\x1f\x20"), "\\x01\\x1f ");
}

TEST(test_c1_controls_in_utf8_are_escaped_byte_by_byte)
{
    CHECK_STR(SHOWN("\xc2\x9b"
                    "31m"),
              "\\xc2\\x9b31m"); /* CSI */
    CHECK_STR(SHOWN("\xc2\x80\xc2\x9f\xc2\xa0"), "\\xc2\\x80\\xc2\\x9f\xc2\xa0");
    CHECK_STR(SHOWN("\xc2\x9d"
                    "0;t\xc2\x9c"),
              "\\xc2\\x9d0;t\\xc2\\x9c"); /* OSC ... ST */
}

TEST(test_bytes_that_are_not_utf8_are_escaped)
{
    CHECK_STR(SHOWN("caf\xe9!"), "caf\\xe9!"); /* Latin-1 */
    CHECK_STR(SHOWN("\x9b"
                    "31m"),
              "\\x9b31m");                                        /* a bare C1 byte */
    CHECK_STR(SHOWN("\x80\xbf"), "\\x80\\xbf");                   /* lone continuation bytes */
    CHECK_STR(SHOWN("\xc0\xaf\xc1\xbf"), "\\xc0\\xaf\\xc1\\xbf"); /* overlong 2-byte */
    CHECK_STR(SHOWN("\xe0\x80\xaf"), "\\xe0\\x80\\xaf");          /* overlong 3-byte */
    CHECK_STR(SHOWN("\xed\xa0\x80"), "\\xed\\xa0\\x80");          /* a surrogate */
    CHECK_STR(SHOWN("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80"); /* past U+10FFFF */
    CHECK_STR(SHOWN("\xf5\xff\xfe"), "\\xf5\\xff\\xfe");
}

TEST(test_truncated_sequence_escapes_its_bytes_and_keeps_what_follows)
{
    CHECK_STR(SHOWN("a\xe2\x82"), "a\\xe2\\x82");
    CHECK_STR(SHOWN("\xe2\x82z\xe2\x82\xac"), "\\xe2\\x82z\xe2\x82\xac");
    CHECK_STR(SHOWN("\xf0\x9f\x94"), "\\xf0\\x9f\\x94");
}

TEST(test_printf_formats_then_escapes_everything)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return;
    const char name[] = "Evil\x1b]0;pwned\x07Name";
    CHECK_INT(bd_term_printf(f, "%s  %5d records  %.*s", "6666", 12, (int)sizeof name - 1, name),
              0);
    fclose(f);
    CHECK_STR(buf, "6666     12 records  Evil\\x1b]0;pwned\\x07Name");
    free(buf);
}

int main(void)
{
    RUN(test_printable_ascii_passes_unchanged);
    RUN(test_valid_utf8_passes_unchanged);
    RUN(test_c0_controls_and_del_are_escaped);
    RUN(test_c1_controls_in_utf8_are_escaped_byte_by_byte);
    RUN(test_bytes_that_are_not_utf8_are_escaped);
    RUN(test_truncated_sequence_escapes_its_bytes_and_keeps_what_follows);
    RUN(test_printf_formats_then_escapes_everything);
    return TEST_EXIT();
}
