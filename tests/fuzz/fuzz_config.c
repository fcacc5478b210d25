/* libFuzzer target: arbitrary bytes as a configuration file (core/config.h). Checks that a
 * parse never crashes, that a refusal leaves no entries and names a line within the text,
 * and that every entry has a well-formed key, a non-empty value without surrounding spaces
 * or newlines, and lines in increasing order within the text's line count. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    unsigned lines = 1;
    for (size_t i = 0; i < size; i++)
        lines += text[i] == '\n';
    bd_config c;
    unsigned line;
    char why[256];
    bd_result r = bd_config_parse(text, size, &c, &line, why, sizeof why);
    if (r != BD_OK) {
        if (r != BD_ERR_INVALID || c.n || c.v || line > lines || !why[0])
            abort();
        return 0;
    }
    unsigned prev = 0;
    for (size_t i = 0; i < c.n; i++) {
        const bd_config_entry *e = &c.v[i];
        size_t vn = strlen(e->value);
        if (!bd_config_key_ok(e->key, strlen(e->key)) || !vn || e->line <= prev ||
            e->line > lines || strchr(e->value, '\n') || e->value[0] == ' ' ||
            e->value[vn - 1] == ' ' || e->value[0] == '\t' || e->value[vn - 1] == '\t')
            abort();
        prev = e->line;
    }
    bd_config_free(&c);
    return 0;
}
