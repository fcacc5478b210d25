/* Terminal-safe text: runs of harmless bytes are written as they are, the rest as \xNN. */
#include "core/term.h"

#include <stdarg.h>

/* Length of the valid UTF-8 sequence at p[0..n) that a terminal may show as it is, or 0 when
 * the byte at p must be escaped (a control, DEL, a C1 control, or not valid UTF-8). */
static size_t shown_len(const unsigned char *p, size_t n)
{
    unsigned char c = p[0];
    if (c < 0x80)
        return c >= 0x20 && c != 0x7f ? 1 : 0;
    size_t need;
    unsigned char lo = 0x80, hi = 0xbf; /* allowed range of the second byte */
    if (c >= 0xc2 && c <= 0xdf) {
        need = 1;
    } else if (c >= 0xe0 && c <= 0xef) {
        need = 2;
        if (c == 0xe0)
            lo = 0xa0; /* overlong */
        else if (c == 0xed)
            hi = 0x9f; /* UTF-16 surrogates */
    } else if (c >= 0xf0 && c <= 0xf4) {
        need = 3;
        if (c == 0xf0)
            lo = 0x90; /* overlong */
        else if (c == 0xf4)
            hi = 0x8f; /* past U+10FFFF */
    } else {
        return 0; /* a continuation byte, an overlong lead (C0, C1) or F5..FF */
    }
    if (n <= need || p[1] < lo || p[1] > hi)
        return 0;
    for (size_t i = 2; i <= need; i++)
        if ((p[i] & 0xc0) != 0x80)
            return 0;
    if (c == 0xc2 && p[1] <= 0x9f)
        return 0; /* U+0080..U+009F: C1 controls, CSI (U+009B) among them */
    return need + 1;
}

int bd_term_write(FILE *f, const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + n;
    while (p < end) {
        const unsigned char *run = p;
        size_t k;
        while (p < end && (k = shown_len(p, (size_t)(end - p))) > 0)
            p += k;
        if (p > run && fwrite(run, 1, (size_t)(p - run), f) != (size_t)(p - run))
            return EOF;
        if (p < end) {
            if (fprintf(f, "\\x%02x", *p) < 0)
                return EOF;
            p++;
        }
    }
    return 0;
}

int bd_term_printf(FILE *f, const char *fmt, ...)
{
    char text[4096];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    if (n < 0)
        return EOF;
    return bd_term_write(f, text, (size_t)n < sizeof text ? (size_t)n : sizeof text - 1);
}
