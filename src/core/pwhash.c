/* SHA-1 and NTLM password hashes (nettle). */
#include "core/pwhash.h"

#include <nettle/md4.h>
#include <nettle/sha1.h>

#include "core/utf8.h"

void bd_pw_sha1(bd_slice pw, uint8_t out[BD_SHA1_LEN])
{
    struct sha1_ctx c;
    sha1_init(&c);
    sha1_update(&c, pw.len, (const uint8_t *)pw.ptr);
    sha1_digest(&c, BD_SHA1_LEN, out);
}

/* The code point of the well-formed sequence of n bytes at p. */
static uint32_t code_point(const unsigned char *p, size_t n)
{
    if (n == 1)
        return p[0];
    uint32_t cp = p[0] & (0x7Fu >> n);
    for (size_t i = 1; i < n; i++)
        cp = (cp << 6) | (p[i] & 0x3Fu);
    return cp;
}

void bd_pw_ntlm(bd_slice pw, uint8_t out[BD_NTLM_LEN])
{
    struct md4_ctx c;
    md4_init(&c);
    uint8_t units[256];
    size_t n = 0;
    const unsigned char *p = (const unsigned char *)pw.ptr;
    for (size_t at = 0; at < pw.len;) {
        size_t len = bd_utf8_seq_len(p + at, pw.len - at);
        uint32_t cp = len ? code_point(p + at, len) : 0xFFFD;
        at += len ? len : 1;
        if (n + 4 > sizeof units) {
            md4_update(&c, n, units);
            n = 0;
        }
        if (cp >= 0x10000) {
            cp -= 0x10000;
            uint32_t hi = 0xD800 | (cp >> 10), lo = 0xDC00 | (cp & 0x3FF);
            units[n++] = (uint8_t)hi;
            units[n++] = (uint8_t)(hi >> 8);
            units[n++] = (uint8_t)lo;
            units[n++] = (uint8_t)(lo >> 8);
        } else {
            units[n++] = (uint8_t)cp;
            units[n++] = (uint8_t)(cp >> 8);
        }
    }
    md4_update(&c, n, units);
    md4_digest(&c, BD_NTLM_LEN, out);
}
