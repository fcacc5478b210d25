/* UUID text forms. */
#include "core/uuid.h"

static bool is_dash_at(size_t i)
{
    return i == 8 || i == 13 || i == 18 || i == 23;
}

bool bd_uuid_canonical(bd_slice s, char out[BD_UUID_TEXT_LEN + 1])
{
    if (s.len != BD_UUID_TEXT_LEN)
        return false;
    for (size_t i = 0; i < BD_UUID_TEXT_LEN; i++) {
        char c = s.ptr[i];
        if (is_dash_at(i)) {
            if (c != '-')
                return false;
            out[i] = c;
        } else if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')) {
            out[i] = c;
        } else if (c >= 'A' && c <= 'F') {
            out[i] = (char)(c - 'A' + 'a');
        } else {
            return false;
        }
    }
    out[BD_UUID_TEXT_LEN] = '\0';
    return true;
}

void bd_uuid_from_bytes(const uint8_t bytes[16], char out[BD_UUID_TEXT_LEN + 1])
{
    static const char hex[] = "0123456789abcdef";
    uint8_t b[16];
    for (int i = 0; i < 16; i++)
        b[i] = bytes[i];
    b[6] = (uint8_t)((b[6] & 0x0f) | 0x40);
    b[8] = (uint8_t)((b[8] & 0x3f) | 0x80);
    size_t j = 0;
    for (int i = 0; i < 16; i++) {
        if (is_dash_at(j))
            out[j++] = '-';
        out[j++] = hex[b[i] >> 4];
        out[j++] = hex[b[i] & 15];
    }
    out[j] = '\0';
}
