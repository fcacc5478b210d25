/* Masking of passwords (UTF-8 aware), SSNs, card numbers and CVVs. */
#include "ingest/mask.h"

#include <string.h>

/* A byte that does not start a well-formed sequence counts as a code point of its own. */
static size_t code_point_len(const unsigned char *p, size_t n)
{
    size_t len = bd_utf8_seq_len(p, n);
    return len ? len : 1;
}

bd_result bd_mask_password(bd_slice pw, char *out, size_t outcap, size_t *out_len)
{
    const unsigned char *p = (const unsigned char *)pw.ptr;
    /* Walk forward once, remembering where the last two code points start. */
    size_t count = 0, last = 0, before_last = 0;
    for (size_t i = 0; i < pw.len; i += code_point_len(p + i, pw.len - i)) {
        before_last = last;
        last = i;
        count++;
    }
    size_t stars, keep_from;
    if (count <= 2) {
        stars = count;
        keep_from = pw.len;
    } else {
        stars = count - 2;
        keep_from = before_last;
    }
    size_t len = stars + (pw.len - keep_from);
    *out_len = 0;
    if (len >= outcap) {
        if (outcap)
            out[0] = '\0';
        return BD_ERR_LIMIT;
    }
    memset(out, '*', stars);
    memcpy(out + stars, pw.ptr + keep_from, pw.len - keep_from);
    out[len] = '\0';
    *out_len = len;
    return BD_OK;
}

void bd_mask_ssn(const char digits9[9], char out[10])
{
    memcpy(out, "*******", 7);
    out[7] = digits9[7];
    out[8] = digits9[8];
    out[9] = '\0';
}

void bd_mask_cvv(size_t n, char out[5])
{
    if (n > 4)
        n = 4;
    memset(out, '*', n);
    out[n] = '\0';
}

bd_slice bd_mask_cvv_shown(bd_slice stored)
{
    if (!stored.ptr)
        return stored;
    return (bd_slice){"****", stored.len < 4 ? stored.len : 4};
}

void bd_mask_card(const char *digits, size_t n, char *out)
{
    memcpy(out, digits, 6);
    memset(out + 6, 'X', n - 10);
    memcpy(out + n - 4, digits + n - 4, 4);
    out[n] = '\0';
}

bool bd_card_digits(bd_slice v, char out[20], size_t *n)
{
    size_t k = 0;
    for (size_t i = 0; i < v.len; i++) {
        char c = v.ptr[i];
        if (c >= '0' && c <= '9') {
            if (k == 19)
                return false;
            out[k++] = c;
        } else if (c != ' ' && c != '-') {
            return false;
        }
    }
    if (k < 12)
        return false;
    out[k] = '\0';
    *n = k;
    return true;
}
