/* Key type masks to and from text. */
#include "auth/key_types.h"

#include <string.h>

#include "auth/keys.h"
#include "ingest/normalize.h"

static bool one_name(bd_slice name, uint32_t *bit)
{
    static const struct {
        const char *name;
        uint32_t bit;
    } extra[] = {
        {"cards", BD_KEY_TYPE_CARDS},
        {"phone", 1u << BD_ID_PHONE},
        {"ssn", 1u << BD_ID_SSN},
        {"hashed_password", 1u << BD_ID_PASSWORD_HASH},
    };
    for (size_t i = 0; i < sizeof extra / sizeof extra[0]; i++) {
        if (bd_slice_eq_nocase(name, extra[i].name)) {
            *bit = extra[i].bit;
            return true;
        }
    }
    bd_id_type t;
    if (!bd_id_type_parse(name, &t))
        return false;
    *bit = bd_key_type_bit(t);
    return true;
}

bool bd_key_types_parse(const char *s, uint32_t *mask)
{
    if (!s)
        return false;
    uint32_t m = 0;
    const char *p = s;
    for (;;) {
        size_t n = strcspn(p, ",");
        const char *a = p, *b = p + n;
        while (a < b && *a == ' ')
            a++;
        while (b > a && b[-1] == ' ')
            b--;
        uint32_t bit;
        if (a == b || !one_name((bd_slice){a, (size_t)(b - a)}, &bit))
            return false;
        m |= bit;
        if (p[n] == '\0')
            break;
        p += n + 1;
    }
    *mask = m;
    return true;
}

void bd_key_types_format(uint32_t mask, bd_buf *out)
{
    bool first = true;
    for (int t = 0; t < BD_ID_COUNT; t++) {
        if (!(mask & bd_key_type_bit(t)))
            continue;
        if (!first)
            bd_buf_append_char(out, ',');
        bd_buf_append_str(out, bd_id_type_name((bd_id_type)t));
        first = false;
    }
    if (mask & BD_KEY_TYPE_CARDS) {
        if (!first)
            bd_buf_append_char(out, ',');
        bd_buf_append_str(out, "cards");
    }
}

uint32_t bd_key_types_resolve(uint32_t stored, int64_t tenant_id)
{
    stored &= BD_KEY_TYPES_ALL;
    if (stored)
        return stored;
    return tenant_id ? BD_KEY_TYPES_TENANT_DEFAULT : BD_KEY_TYPES_ALL;
}
