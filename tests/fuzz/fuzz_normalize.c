/* Fuzz target: identity normalisation (the breach-search `account` and filter values).
 * The first byte picks the type. A value that normalises must normalise to itself again
 * (normal forms are fixed points), and the output must fit its buffer. */
#include <stdint.h>
#include <string.h>

#include "ingest/normalize.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    bd_id_type t = (bd_id_type)(data[0] % BD_ID_COUNT);
    char out[BD_NORM_MAX + 1], again[BD_NORM_MAX + 1];
    size_t n, m;
    const char *why = NULL;
    if (bd_normalize(t, (bd_slice){(const char *)data + 1, size - 1}, out, &n, &why) != BD_OK) {
        if (!why)
            __builtin_trap(); /* every refusal explains itself */
        return 0;
    }
    if (n > BD_NORM_MAX || out[n] != '\0')
        __builtin_trap();
    if (bd_normalize(t, (bd_slice){out, n}, again, &m, &why) != BD_OK || m != n ||
        memcmp(out, again, n) != 0)
        __builtin_trap();
    return 0;
}
