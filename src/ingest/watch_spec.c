/* What a watch names, normalised as imported rows are (watch_spec.h). */
#include <sodium.h>
#include <string.h>
#include <strings.h>

#include "core/hex.h"
#include "ingest/mask.h"
#include "ingest/watch_spec.h"

const char *bd_watch_type_name(int type)
{
    if (type == BD_WATCH_BIN)
        return "bin";
    return bd_id_type_name((bd_id_type)type);
}

static bd_result parse_bin(bd_slice value, bd_watch_spec *out, const char **why)
{
    size_t b = 0, e = value.len;
    while (b < e && (value.ptr[b] == ' ' || value.ptr[b] == '\t'))
        b++;
    while (e > b && (value.ptr[e - 1] == ' ' || value.ptr[e - 1] == '\t'))
        e--;
    bool ok = e - b == 6;
    for (size_t i = b; ok && i < e; i++)
        ok = value.ptr[i] >= '0' && value.ptr[i] <= '9';
    if (!ok) {
        *why = "a bin is the first 6 digits of a card number";
        return BD_ERR_INVALID;
    }
    out->type = BD_WATCH_BIN;
    memcpy(out->key, value.ptr + b, 6);
    out->key[6] = '\0';
    out->key_len = 6;
    memcpy(out->shown, out->key, 7);
    out->shown_len = 6;
    return BD_OK;
}

bd_result bd_watch_spec_parse(const uint8_t secret[BD_SECRET_LEN], bd_slice type, bd_slice value,
                              bd_watch_spec *out, const char **why)
{
    memset(out, 0, sizeof *out);
    *why = NULL;
    if (type.len == 3 && strncasecmp(type.ptr, "bin", 3) == 0)
        return parse_bin(value, out, why);
    bd_id_type t;
    if (!bd_id_type_parse(type, &t)) {
        *why = "the type must be one of email, email_domain, phone_number (phonenumber), "
               "username, ip_address (ipaddress), social_security_number, password, "
               "password_hash, bitcoin_address, website_domain, bin";
        return BD_ERR_INVALID;
    }
    char norm[BD_NORM_MAX + 1];
    size_t n;
    if (bd_normalize(t, value, norm, &n, why) != BD_OK) {
        if (!*why)
            *why = "not a valid value of its type";
        return BD_ERR_INVALID;
    }
    out->type = (int)t;
    if (t == BD_ID_PASSWORD || t == BD_ID_SSN) {
        uint8_t mac[BD_MAC_LEN];
        bd_keyed_hash(secret, t == BD_ID_PASSWORD ? "password" : "ssn", norm, n, mac);
        bd_hex_encode(mac, sizeof mac, out->key);
        out->key[2 * sizeof mac] = '\0';
        out->key_len = 2 * sizeof mac;
        if (t == BD_ID_SSN) {
            bd_mask_ssn(norm, out->shown);
            out->shown_len = 9;
        } else if (bd_mask_password((bd_slice){norm, n}, out->shown, sizeof out->shown,
                                    &out->shown_len) != BD_OK) {
            *why = "the password is too long";
            return BD_ERR_INVALID;
        }
        sodium_memzero(norm, sizeof norm);
        return BD_OK;
    }
    memcpy(out->key, norm, n + 1);
    out->key_len = n;
    memcpy(out->shown, norm, n + 1);
    out->shown_len = n;
    return BD_OK;
}
