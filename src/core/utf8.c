/* Well-formed UTF-8, and its repair. */
#include "core/utf8.h"

/* Length of the well-formed UTF-8 sequence at p (1..4), or 0 when the bytes there are not
 * one (overlong forms, surrogates, code points past U+10FFFF and truncation included). */
size_t bd_utf8_seq_len(const unsigned char *p, size_t avail)
{
    if (avail == 0)
        return 0;
    unsigned char c = p[0];
    size_t n;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        n = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        if (c == 0xE0)
            lo = 0xA0;
        else if (c == 0xED)
            hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        if (c == 0xF0)
            lo = 0x90;
        else if (c == 0xF4)
            hi = 0x8F;
    } else
        return 0;
    if (avail < n)
        return 0;
    if (p[1] < lo || p[1] > hi)
        return 0;
    for (size_t i = 2; i < n; i++)
        if ((p[i] & 0xC0) != 0x80)
            return 0;
    return n;
}

bool bd_utf8_valid(bd_slice s)
{
    const unsigned char *p = (const unsigned char *)s.ptr;
    for (size_t i = 0; i < s.len;) {
        size_t n = bd_utf8_seq_len(p + i, s.len - i);
        if (n == 0)
            return false;
        i += n;
    }
    return true;
}

bd_result bd_utf8_append_repaired(bd_buf *out, bd_slice s)
{
    const unsigned char *p = (const unsigned char *)s.ptr;
    size_t i = 0, run = 0; /* [i - run, i) is well-formed and not yet copied */
    bd_result r = BD_OK;
    while (i < s.len && r == BD_OK) {
        size_t n = bd_utf8_seq_len(p + i, s.len - i);
        if (n > 0) {
            i += n;
            run += n;
            continue;
        }
        r = bd_buf_append(out, p + i - run, run);
        if (r == BD_OK)
            r = bd_buf_append(out, "\xEF\xBF\xBD", 3);
        run = 0;
        i++;
    }
    return r == BD_OK ? bd_buf_append(out, p + i - run, run) : r;
}
