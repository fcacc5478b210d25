#include "core/base64url.h"

static const char ALPHABET[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

size_t bd_base64url_encode(const uint8_t *in, size_t n, char *out)
{
    char *o = out;
    size_t i = 0;
    for (; i + 3 <= n; i += 3) {
        uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];
        *o++ = ALPHABET[v >> 18];
        *o++ = ALPHABET[(v >> 12) & 63];
        *o++ = ALPHABET[(v >> 6) & 63];
        *o++ = ALPHABET[v & 63];
    }
    if (n - i == 1) {
        uint32_t v = (uint32_t)in[i] << 16;
        *o++ = ALPHABET[v >> 18];
        *o++ = ALPHABET[(v >> 12) & 63];
    } else if (n - i == 2) {
        uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8;
        *o++ = ALPHABET[v >> 18];
        *o++ = ALPHABET[(v >> 12) & 63];
        *o++ = ALPHABET[(v >> 6) & 63];
    }
    *o = '\0';
    return (size_t)(o - out);
}
