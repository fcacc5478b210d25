/* Fuzz target: the JSON writer's string escaping. Any bytes in, the output is always a JSON
 * string that jansson accepts (valid UTF-8, every control character escaped), and valid UTF-8
 * input comes back unchanged. */
#include <jansson.h>
#include <stdint.h>
#include <string.h>

#include "core/json.h"
#include "ingest/mask.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int valid_utf8(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n;) {
        size_t k = bd_utf8_seq_len(p + i, n - i);
        if (k == 0)
            return 0;
        i += k;
    }
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    bd_buf b;
    bd_buf_init(&b, 16 * size + 64);
    bd_json w;
    bd_json_init(&w, &b);
    bd_json_string(&w, (bd_slice){(const char *)data, size});
    if (bd_json_result(&w) != BD_OK)
        __builtin_trap();
    json_error_t err;
    json_t *v = json_loadb(b.data, b.len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &err);
    if (!json_is_string(v))
        __builtin_trap();
    if (valid_utf8(data, size) &&
        (json_string_length(v) != size || memcmp(json_string_value(v), data, size) != 0))
        __builtin_trap();
    json_decref(v);
    bd_buf_free(&b);
    return 0;
}
