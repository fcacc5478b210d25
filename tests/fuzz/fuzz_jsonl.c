/* libFuzzer target: arbitrary bytes as one JSON Lines line. Checks that the fast parser and the
 * jansson reference agree exactly, and feeds every parsed value through normalisation and
 * password masking, checking their output invariants. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/fields.h"
#include "ingest/jsonl.h"
#include "ingest/mask.h"
#include "ingest/normalize.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_value(bd_slice v)
{
    char out[BD_NORM_MAX + 1];
    for (int t = 0; t < BD_ID_COUNT; t++) {
        size_t n = 0;
        const char *why = NULL;
        bd_result r = bd_normalize((bd_id_type)t, v, out, &n, &why);
        if (r == BD_OK) {
            if (n > BD_NORM_MAX || out[n] != '\0' || why != NULL)
                abort();
            if (t != BD_ID_PASSWORD && strlen(out) != n)
                abort();
        } else if (r != BD_ERR_INVALID || !why || n != 0 || out[0] != '\0') {
            abort();
        }
    }
    char masked[BD_NORM_MAX + 1];
    size_t mlen = 0;
    bd_result r = bd_mask_password(v, masked, sizeof masked, &mlen);
    if (r == BD_OK && (mlen > v.len || masked[mlen] != '\0'))
        abort();
    if (r != BD_OK && (r != BD_ERR_LIMIT || v.len < sizeof masked))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static bd_fields *fast, *ref;
    if (!fast) {
        fast = bd_fields_new();
        ref = bd_fields_new();
        if (!fast || !ref)
            abort();
    }
    const char *line = (const char *)data;
    char why_fast[256] = "", why_ref[256] = "";
    bd_result a = bd_jsonl_parse(line, size, fast, why_fast, sizeof why_fast);
    bd_result b = bd_jsonl_parse_jansson(line, size, ref, why_ref, sizeof why_ref);
    if (a != b)
        abort();
    if (a != BD_OK) {
        if (strcmp(why_fast, why_ref) != 0 || why_fast[0] == '\0' || bd_fields_count(fast) != 0)
            abort();
        return 0;
    }
    if (bd_fields_count(fast) != bd_fields_count(ref))
        abort();
    for (size_t i = 0; i < bd_fields_count(fast); i++) {
        bd_slice x = {NULL, 0}, y = {NULL, 0};
        const char *name = bd_fields_name(fast, i);
        if (strcmp(name, bd_fields_name(ref, i)) != 0)
            abort();
        bool has_x = bd_fields_value(fast, i, &x), has_y = bd_fields_value(ref, i, &y);
        if (has_x != has_y || x.len != y.len || (x.len && memcmp(x.ptr, y.ptr, x.len) != 0))
            abort();
        bd_slice g;
        if (bd_fields_get(fast, name, &g) != has_x || (has_x && g.ptr != x.ptr))
            abort();
        if (has_x)
            check_value(x);
    }
    return 0;
}
