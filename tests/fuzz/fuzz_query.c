/* libFuzzer driver for the card query parser: any bytes must parse or be refused cleanly,
 * never crash, hang or read past the input. On success the tree is printed; on refusal the
 * error must point inside the input and read as printable ASCII. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "query/query.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* A copy of exactly size bytes, so ASan catches any read past the end. */
    char *text = malloc(size ? size : 1);
    if (!text)
        return 0;
    if (size)
        memcpy(text, data, size);
    bd_query *q = NULL;
    bd_query_error err;
    bd_result r = bd_query_parse(text, size, &q, &err);
    if (r == BD_OK) {
        bd_buf out;
        bd_buf_init(&out, 1 << 20);
        if (bd_query_to_string(q, &out) != BD_OK)
            abort();
        bd_buf_free(&out);
        bd_query_free(q);
    } else if (r == BD_ERR_INVALID) {
        if (q || err.pos < 0 || (size_t)err.pos > size || !err.message[0])
            abort();
        for (const char *m = err.message; *m; m++)
            if ((unsigned char)*m < 0x20 || (unsigned char)*m > 0x7e)
                abort();
        /* The node array is sized so that no query within the limits can fill it. */
        if (strncmp(err.message, "query is too complex", 20) == 0)
            abort();
    }
    free(text);
    return 0;
}
