/* Breach Names: derivation from the source name and the candidates tried for uniqueness. */
#include "store/breach_name.h"

#include <stdio.h>
#include <string.h>

static bool is_alnum(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

size_t bd_breach_name_base(bd_slice source, char out[BD_BREACH_NAME_MAX + 1])
{
    size_t n = 0;
    bool word_start = true;
    for (size_t i = 0; i < source.len && n < BD_BREACH_NAME_MAX; i++) {
        unsigned char c = (unsigned char)source.ptr[i];
        if (c >= 0x80) /* a letter of another script: left out, the word goes on */
            continue;
        if (!is_alnum(c)) {
            word_start = true;
            continue;
        }
        if (word_start && c >= 'a' && c <= 'z')
            c = (unsigned char)(c - 'a' + 'A');
        word_start = false;
        out[n++] = (char)c;
    }
    if (n == 0) {
        memcpy(out, "Breach", 6);
        n = 6;
    }
    out[n] = '\0';
    return n;
}

void bd_breach_name_start(bd_slice wanted, bd_slice source, char out[BD_BREACH_NAME_MAX + 1])
{
    if (wanted.ptr && bd_breach_name_valid(wanted)) {
        memcpy(out, wanted.ptr, wanted.len);
        out[wanted.len] = '\0';
    } else {
        bd_breach_name_base(source, out);
    }
}

void bd_breach_name_candidate(const char *base, int k, char out[BD_BREACH_NAME_MAX + 1])
{
    char digits[16] = "";
    if (k > 1)
        snprintf(digits, sizeof digits, "%d", k);
    size_t dl = strlen(digits), bl = strlen(base);
    if (bl + dl > BD_BREACH_NAME_MAX)
        bl = BD_BREACH_NAME_MAX - dl;
    memcpy(out, base, bl);
    memcpy(out + bl, digits, dl + 1);
}

bool bd_breach_name_valid(bd_slice s)
{
    if (s.len == 0 || s.len > BD_BREACH_NAME_MAX)
        return false;
    for (size_t i = 0; i < s.len; i++)
        if (!is_alnum((unsigned char)s.ptr[i]))
            return false;
    return true;
}
