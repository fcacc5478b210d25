/* gzip replies (gzip.h). */
#include "http/gzip.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>

/* Level 1: a search page compresses to about a fifth either way, and level 6 takes about
 * three times as long on this kind of JSON. */
#define LEVEL 1

struct bd_gzip {
    z_stream z;
    bool ready;
};

/* The q-value of one Accept-Encoding member's parameters (";q=0.5"), 1000ths; 1000 when
 * absent, -1 when malformed. */
static int qvalue(const char *p, size_t n)
{
    for (size_t i = 0; i < n;) {
        while (i < n && (p[i] == ';' || p[i] == ' ' || p[i] == '\t'))
            i++;
        if (i + 1 < n && (p[i] == 'q' || p[i] == 'Q') && p[i + 1] == '=') {
            i += 2;
            int q = 0, digits = 0;
            if (i < n && (p[i] == '0' || p[i] == '1'))
                q = (p[i++] - '0') * 1000;
            else
                return -1;
            if (i < n && p[i] == '.') {
                i++;
                for (int scale = 100; i < n && p[i] >= '0' && p[i] <= '9'; scale /= 10, i++) {
                    if (++digits > 3)
                        return -1;
                    q += (p[i] - '0') * scale;
                }
            }
            return q > 1000 ? -1 : q;
        }
        while (i < n && p[i] != ';')
            i++;
    }
    return 1000;
}

bool bd_gzip_accepted(const char *ae)
{
    if (!ae)
        return false;
    int gzip_q = -1, star_q = -1;
    for (const char *p = ae; *p;) {
        size_t n = strcspn(p, ",");
        const char *m = p;
        size_t ml = n;
        while (ml && (*m == ' ' || *m == '\t'))
            m++, ml--;
        size_t tl = strcspn(m, ";, \t");
        if (tl > ml)
            tl = ml;
        int q = qvalue(m + tl, ml - tl);
        if ((tl == 4 && strncasecmp(m, "gzip", 4) == 0) ||
            (tl == 6 && strncasecmp(m, "x-gzip", 6) == 0))
            gzip_q = q > gzip_q ? q : gzip_q;
        else if (tl == 1 && *m == '*')
            star_q = q;
        p += n;
        if (*p == ',')
            p++;
    }
    return gzip_q >= 0 ? gzip_q > 0 : star_q > 0;
}

bd_gzip *bd_gzip_new(void)
{
    return calloc(1, sizeof(bd_gzip));
}

void bd_gzip_free(bd_gzip *g)
{
    if (!g)
        return;
    if (g->ready)
        deflateEnd(&g->z);
    free(g);
}

bd_result bd_gzip_compress(bd_gzip *g, bd_slice in, bd_buf *out)
{
    if (!g->ready) {
        /* 15 + 16: a 32 KiB window with a gzip header and trailer; memLevel 8 is zlib's
         * default */
        if (deflateInit2(&g->z, LEVEL, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
            return BD_ERR_NOMEM;
        g->ready = true;
    } else if (deflateReset(&g->z) != Z_OK) {
        return BD_ERR_IO;
    }
    bd_buf_reset(out);
    size_t bound = deflateBound(&g->z, (uLong)in.len);
    if (bound > out->max)
        bound = out->max; /* may still fit: deflate says so if not */
    bd_result r = bd_buf_reserve(out, bound);
    if (r != BD_OK)
        return r;
    g->z.next_in = (Bytef *)(uintptr_t)in.ptr;
    g->z.avail_in = (uInt)in.len;
    g->z.next_out = (Bytef *)out->data;
    g->z.avail_out = (uInt)(out->cap - 1);
    int rc = deflate(&g->z, Z_FINISH);
    if (rc != Z_STREAM_END)
        return rc == Z_OK || rc == Z_BUF_ERROR ? BD_ERR_LIMIT : BD_ERR_IO;
    out->len = out->cap - 1 - g->z.avail_out;
    out->data[out->len] = '\0';
    return BD_OK;
}
