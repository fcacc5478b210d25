/* Fuzz target: the Pwned Passwords line parser (breachctl import pwned-passwords). The
 * first byte chooses a whole-hash line or a per-prefix file's line (and its prefix). A line
 * that parses must print back, upper-cased and without spaces, to a line that parses to the
 * same hash and count; every refusal explains itself. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "ingest/pwned.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    int32_t prefix = data[0] & 1 ? (int32_t)(data[0] * 4099u % 0x100000u) : -1;
    bd_slice line = {(const char *)data + 1, size - 1};
    bd_range_mode mode, again_mode;
    uint8_t hash[20], again[20];
    uint32_t count, again_count;
    const char *why = NULL;
    if (bd_pwned_parse_line(line, prefix, &mode, hash, &count, &why) != BD_OK) {
        if (!why)
            __builtin_trap();
        return 0;
    }
    if (count == 0 || (mode != BD_RANGE_SHA1 && mode != BD_RANGE_NTLM))
        __builtin_trap();
    size_t digits = mode == BD_RANGE_SHA1 ? 40 : 32;
    char text[64];
    size_t n = 0;
    for (size_t i = 0; i < digits; i++)
        text[n++] = "0123456789ABCDEF"[i % 2 ? hash[i / 2] & 0xF : hash[i / 2] >> 4];
    n += (size_t)snprintf(text + n, sizeof text - n, ":%u", count);
    if (bd_pwned_parse_line((bd_slice){text, n}, -1, &again_mode, again, &again_count, &why) !=
            BD_OK ||
        again_mode != mode || again_count != count || memcmp(hash, again, 20) != 0)
        __builtin_trap();
    if (prefix >= 0 &&
        ((uint32_t)hash[0] << 12 | (uint32_t)hash[1] << 4 | hash[2] >> 4) != (uint32_t)prefix)
        __builtin_trap(); /* the file's prefix is the hash's */
    return 0;
}
