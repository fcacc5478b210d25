/* Capped growable buffer. */
#include "core/buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void bd_buf_init(bd_buf *b, size_t max)
{
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    b->max = max;
}

void bd_buf_free(bd_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

void bd_buf_reset(bd_buf *b)
{
    b->len = 0;
    if (b->data)
        b->data[0] = '\0';
}

void bd_buf_truncate(bd_buf *b, size_t len)
{
    if (len >= b->len)
        return;
    b->len = len;
    b->data[len] = '\0';
}

bd_result bd_buf_reserve(bd_buf *b, size_t n)
{
    if (n > b->max || b->len > b->max - n)
        return BD_ERR_LIMIT;
    size_t need = b->len + n + 1;
    if (need <= b->cap)
        return BD_OK;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < need)
        cap *= 2;
    if (cap > b->max + 1)
        cap = b->max + 1;
    char *p = realloc(b->data, cap);
    if (!p)
        return BD_ERR_NOMEM;
    b->data = p;
    b->cap = cap;
    return BD_OK;
}

bd_result bd_buf_append(bd_buf *b, const void *p, size_t n)
{
    bd_result r = bd_buf_reserve(b, n);
    if (r != BD_OK)
        return r;
    if (n)
        memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
    return BD_OK;
}

bd_result bd_buf_append_str(bd_buf *b, const char *s)
{
    return bd_buf_append(b, s, strlen(s));
}

bd_result bd_buf_append_char(bd_buf *b, char c)
{
    return bd_buf_append(b, &c, 1);
}

bd_result bd_buf_append_slice(bd_buf *b, bd_slice s)
{
    return bd_buf_append(b, s.ptr, s.len);
}

const char *bd_i64_text(int64_t v, char out[24])
{
    char *p = out + 23;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    *p = '\0';
    do {
        *--p = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        *--p = '-';
    return p;
}

bd_result bd_buf_append_i64(bd_buf *b, int64_t v)
{
    char tmp[24];
    return bd_buf_append_str(b, bd_i64_text(v, tmp));
}

bd_result bd_buf_printf(bd_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char small[256];
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return BD_ERR_INVALID;
    if ((size_t)n < sizeof small)
        return bd_buf_append(b, small, (size_t)n);
    bd_result r = bd_buf_reserve(b, (size_t)n);
    if (r != BD_OK)
        return r;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    return BD_OK;
}
