/* Entity tags (etag.h). */
#include "http/etag.h"

#include <sodium.h>
#include <string.h>

void bd_etag_of(bd_slice body, char out[BD_ETAG_LEN + 1])
{
    uint8_t h[16];
    crypto_generichash(h, sizeof h, (const unsigned char *)body.ptr, body.len, NULL, 0);
    memcpy(out, "W/\"", 3);
    sodium_bin2hex(out + 3, 33, h, sizeof h);
    out[35] = '"';
    out[36] = '\0';
}

bool bd_etag_matches(const char *inm, const char *etag)
{
    if (!inm)
        return false;
    const char *want = etag + 2; /* the quoted opaque tag, without W/ */
    size_t wl = strlen(want);
    for (const char *p = inm; *p;) {
        p += strspn(p, " \t,");
        if (!*p)
            break;
        if (*p == '*')
            return true;
        const char *t = p;
        if (t[0] == 'W' && t[1] == '/')
            t += 2;
        if (*t != '"')
            return false; /* not a list of entity tags: stop, match nothing more */
        const char *close = strchr(t + 1, '"');
        if (!close)
            return false;
        size_t tl = (size_t)(close - t) + 1;
        if (tl == wl && memcmp(t, want, wl) == 0)
            return true;
        p = close + 1;
    }
    return false;
}
