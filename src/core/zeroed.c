#include "core/zeroed.h"

#include <stdlib.h>
#include <string.h>

#define LINE 64

void *bd_zeroed_alloc(size_t n)
{
    size_t size = (n + LINE - 1) / LINE * LINE;
    if (size < n)
        return NULL;
    /* aligned_alloc, not malloc: GCC folds malloc followed by memset of zero into calloc,
     * which undoes the point (its build of 52d159c called calloc here) */
    void *p = aligned_alloc(LINE, size ? size : LINE);
    if (p)
        memset(p, 0, size);
    return p;
}
