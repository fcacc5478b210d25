/* {ptr,len} views of bytes owned elsewhere: strings from the network are never trusted to be
 * NUL-terminated. A slice never owns its bytes. */
#ifndef BD_CORE_SLICE_H
#define BD_CORE_SLICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct {
    const char *ptr;
    size_t len;
} bd_slice;

#define BD_SLICE_LIT(s) ((bd_slice){(s), sizeof(s) - 1})

static inline bd_slice bd_slice_from(const char *s)
{
    return (bd_slice){s, s ? strlen(s) : 0};
}

static inline bool bd_slice_eq(bd_slice a, const char *lit)
{
    size_t n = strlen(lit);
    return a.len == n && memcmp(a.ptr, lit, n) == 0;
}

/* ASCII letters compared without case; other bytes exactly (never locale-dependent). */
static inline bool bd_slice_eq_nocase(bd_slice a, const char *lit)
{
    size_t n = strlen(lit);
    if (a.len != n)
        return false;
    for (size_t i = 0; i < n; i++) {
        unsigned char x = (unsigned char)a.ptr[i], y = (unsigned char)lit[i];
        if (x >= 'A' && x <= 'Z')
            x = (unsigned char)(x - 'A' + 'a');
        if (y >= 'A' && y <= 'Z')
            y = (unsigned char)(y - 'A' + 'a');
        if (x != y)
            return false;
    }
    return true;
}

/* FNV-1a: a quick, unkeyed hash for small in-process caches of trusted keys. */
static inline uint32_t bd_slice_hash(bd_slice s)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < s.len; i++)
        h = (h ^ (uint8_t)s.ptr[i]) * 16777619u;
    return h;
}

#endif
