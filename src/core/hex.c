/* Hexadecimal digits to bytes and back (hex.h). */
#include "core/hex.h"

int bd_hex_digit(char c, bd_hex_case accepted)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (accepted == BD_HEX_ANY_CASE && c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

int32_t bd_hex_value(const char *p, size_t n)
{
    if (n < 1 || n > 7)
        return -1;
    int32_t v = 0;
    for (size_t i = 0; i < n; i++) {
        int d = bd_hex_digit(p[i], BD_HEX_ANY_CASE);
        if (d < 0)
            return -1;
        v = v << 4 | d;
    }
    return v;
}

bool bd_hex_decode(bd_slice hex, uint8_t *out, size_t n, bd_hex_case accepted)
{
    if (hex.len / 2 != n || hex.len % 2 != 0)
        return false;
    for (size_t i = 0; i < n; i++) {
        int hi = bd_hex_digit(hex.ptr[2 * i], accepted);
        int lo = bd_hex_digit(hex.ptr[2 * i + 1], accepted);
        if (hi < 0 || lo < 0)
            return false;
        out[i] = (uint8_t)(hi << 4 | lo);
    }
    return true;
}

void bd_hex_encode(const uint8_t *in, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[in[i] >> 4];
        out[2 * i + 1] = digits[in[i] & 15];
    }
}
