/* Fuzz target: the Accept header's parser (http/accept.h), and CSV cells (core/csv_out.h)
 * over the same bytes: no crash, no read past the input, and a cell that reads back. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/csv_out.h"
#include "http/accept.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1); /* a header value is a C string */
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    (void)bd_accept_prefers_csv(text);
    bd_buf b;
    bd_buf_init(&b, 4 * size + 16);
    if (bd_csv_cell(&b, (bd_slice){(const char *)data, size}, true) == BD_OK) {
        /* unquoted, a cell is the input (after a guard's apostrophe); quoted, its quotes
         * are doubled: never shorter than the input, never more than twice it plus 3 */
        if (b.len < size || b.len > 2 * size + 3)
            __builtin_trap();
    }
    bd_buf_free(&b);
    free(text);
    return 0;
}
