/* libFuzzer target: arbitrary bytes as a --map spec, a CSV header and a row (split at the
 * first two NUL bytes). Checks that parsing, planning and carrying a row never crash, that a
 * parsed map has non-empty, distinct names, and that a carried row holds only fields of the
 * list (other_attributes built from unmapped columns as a JSON object jansson reads). */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/colmap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const FIELDS[] = {"email",      "password",         "user_name",
                                     "ip_address", "other_attributes", NULL};

static bool listed(const char *name)
{
    for (size_t i = 0; FIELDS[i]; i++)
        if (strcmp(FIELDS[i], name) == 0)
            return true;
    return false;
}

static void check_map(const bd_colmap *m)
{
    for (size_t i = 0; i < bd_colmap_count(m); i++) {
        if (!bd_colmap_source(m, i)[0] || !bd_colmap_field(m, i)[0])
            abort();
        for (size_t j = 0; j < i; j++)
            if (strcmp(bd_colmap_source(m, i), bd_colmap_source(m, j)) == 0 ||
                strcmp(bd_colmap_field(m, i), bd_colmap_field(m, j)) == 0)
                abort();
    }
}

static void carry(const bd_colmap *m, bd_csv_header *h, const char *row, size_t rlen)
{
    static bd_fields *in, *out;
    static bd_buf scratch;
    if (!in) {
        in = bd_fields_new();
        out = bd_fields_new();
        bd_buf_init(&scratch, BD_FIELDS_BYTES_MAX);
    }
    char why[256];
    int plan[BD_FIELDS_MAX];
    for (int drop = 0; drop < 2; drop++) {
        if (bd_colmap_plan(m, h, FIELDS, drop, plan, why, sizeof why) != BD_OK)
            continue;
        if (bd_csv_parse_row(h, row, rlen, in, why, sizeof why) != BD_OK)
            return;
        if (bd_colmap_apply(m, h, plan, in, out, &scratch) != BD_OK)
            continue;
        for (size_t i = 0; i < bd_fields_count(out); i++) {
            const char *name = bd_fields_name(out, i);
            if (!listed(name))
                abort();
            bd_slice v;
            /* other_attributes is built here only from unmapped columns; a column the
             * file or the map names other_attributes carries any text (the import's
             * check refuses one that is not an object). */
            bool built = false;
            for (size_t k = 0; k < bd_csv_header_count(h); k++)
                built = built || plan[k] == BD_COL_OTHER;
            if (strcmp(name, "other_attributes") == 0 && bd_fields_value(out, i, &v) && built) {
                json_error_t err;
                json_t *o = json_loadb(v.ptr, v.len, JSON_ALLOW_NUL, &err);
                if (!json_is_object(o))
                    abort();
                json_decref(o);
            }
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *p = (const char *)data, *end = p + size;
    const char *z1 = memchr(p, '\0', size);
    if (!z1)
        return 0;
    const char *z2 = memchr(z1 + 1, '\0', (size_t)(end - z1 - 1));
    if (!z2)
        return 0;
    char why[256];
    bd_colmap *m = NULL;
    if (bd_colmap_parse(p, &m, why, sizeof why) == BD_OK)
        check_map(m);
    bd_csv_header *h = bd_csv_header_new();
    if (bd_csv_parse_header(z1 + 1, (size_t)(z2 - z1 - 1), h, why, sizeof why) == BD_OK)
        carry(m, h, z2 + 1, (size_t)(end - z2 - 1));
    bd_csv_header_free(h);
    bd_colmap_free(m);
    return 0;
}
