/* Import, the checking of a card row: number, dates, cvv and score, the keyed id. */
#include <math.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "core/date.h"
#include "core/pwhash.h"
#include "core/sha256.h"
#include "core/uuid.h"
#include "ingest/cvv.h"
#include "ingest/import_impl.h"
#include "ingest/mask.h"

/* YYYY-MM-DD, YYYY-MM or MM/YY; the month forms mean the month's last day, when a card
 * stops being valid. */
static bool parse_expiry(bd_slice v, bd_datetime *d)
{
    if (bd_date_parse_iso(v, d))
        return true;
    char tmp[11];
    if (v.len == 7 && v.ptr[4] == '-') {
        memcpy(tmp, v.ptr, 7);
        memcpy(tmp + 7, "-01", 3);
    } else if (v.len == 5 && v.ptr[2] == '/') {
        memcpy(tmp, "20", 2);
        memcpy(tmp + 2, v.ptr + 3, 2);
        tmp[4] = '-';
        memcpy(tmp + 5, v.ptr, 2);
        memcpy(tmp + 7, "-01", 3);
    } else {
        return false;
    }
    if (!bd_date_parse_iso((bd_slice){tmp, 10}, d))
        return false;
    d->d = bd_days_in_month(d->y, d->m);
    return true;
}

static bd_result optional_date(importer *im, const char *name, char out[11])
{
    bd_slice v;
    bd_datetime d;
    out[0] = '\0';
    if (!bd_check_get(im, name, &v))
        return BD_OK;
    if (!bd_date_parse_iso(v, &d))
        return bd_check_reject(im, "%s must be YYYY-MM-DD", name);
    bd_date_format_iso(&d, out);
    return BD_OK;
}

bd_result bd_import_check_card(importer *im, staged *out)
{
    const char *const *names = bd_import_field_names(BD_IMPORT_CARDS);
    bd_card_in c;
    memset(&c, 0, sizeof c);
    bd_result r = bd_check_names(im, names);
    if (r != BD_OK)
        return r;
    bd_slice v;
    char digits[20];
    size_t n;
    if (!bd_check_get(im, "number", &v))
        return bd_check_reject(im, "number is required");
    if (!bd_card_digits(v, digits, &n))
        return bd_check_reject(im, "number must be 12 to 19 digits (spaces and dashes allowed)");
    bd_mask_card(digits, n, c.number_masked);
    memcpy(c.bin, digits, 6);
    memcpy(c.last4, digits + n - 4, 4);
    c.length = (int)n;
    uint8_t sha[32];
    bd_sha256(digits, n, sha);
    bd_card_key(im->secret, sha, c.number_hmac);

    bd_datetime d;
    if (!bd_check_get(im, "createdAt", &v))
        return bd_check_reject(im, "createdAt is required");
    if (bd_datetime_parse(v, &d) || bd_date_parse_iso(v, &d))
        bd_datetime_format(&d, c.created_at);
    else
        return bd_check_reject(im, "createdAt must be YYYY-MM-DD HH:MM:SS");
    if (bd_check_get(im, "expireDate", &v)) {
        if (!parse_expiry(v, &d))
            return bd_check_reject(im, "expireDate must be YYYY-MM-DD, YYYY-MM or MM/YY");
        bd_date_format_iso(&d, c.expire_date);
    }
    if ((r = optional_date(im, "leakPublishDate", c.leak_publish_date)) != BD_OK ||
        (r = optional_date(im, "leakDiscoverDate", c.leak_discover_date)) != BD_OK ||
        (r = bd_check_text(im, "bank", &c.bank)) != BD_OK ||
        (r = bd_check_text(im, "owner", &c.owner)) != BD_OK ||
        (r = bd_check_text(im, "leakId", &c.leak_id)) != BD_OK ||
        (r = bd_check_text(im, "leakName", &c.leak_name)) != BD_OK ||
        (r = bd_check_text(im, "leakTags", &c.leak_tags)) != BD_OK ||
        (r = bd_check_integer(im, "leakSize", &c.leak_size)) != BD_OK)
        return r;
    bd_slice cvv = {NULL, 0}; /* in clear only here: the card keeps its mask and keyed hash */
    if (bd_check_get(im, "cvv", &v)) {
        bool ok = v.len == 3 || v.len == 4;
        for (size_t i = 0; ok && i < v.len; i++)
            ok = v.ptr[i] >= '0' && v.ptr[i] <= '9';
        if (!ok)
            return bd_check_reject(im, "cvv must be 3 or 4 digits");
        cvv = v;
        bd_cvv_protect(im->secret, cvv, c.cvv_masked, c.cvv_hmac);
    }
    if (bd_check_get(im, "cvssScore", &v)) {
        char tmp[32];
        char *end;
        if (v.len >= sizeof tmp)
            return bd_check_reject(im, "cvssScore must be a number from 0 to 10");
        memcpy(tmp, v.ptr, v.len);
        tmp[v.len] = '\0';
        c.cvss = strtod(tmp, &end);
        if (*end || !isfinite(c.cvss) || c.cvss < 0 || c.cvss > 10)
            return bd_check_reject(im, "cvssScore must be a number from 0 to 10");
        c.has_cvss = true;
    }
    if (bd_check_get(im, "id", &v)) {
        if (v.len > BD_UUID_LEN)
            return bd_check_reject(im, "id is longer than %d characters", BD_UUID_LEN);
        for (size_t i = 0; i < v.len; i++)
            if ((unsigned char)v.ptr[i] <= 0x20 || (unsigned char)v.ptr[i] >= 0x7f)
                return bd_check_reject(im, "id must be printable ASCII without spaces");
        memcpy(c.id, v.ptr, v.len);
        c.id[v.len] = '\0';
    } else {
        /* Keyed, so the id reveals nothing of the number; stable, so a re-import matches. */
        bd_hmac_sha256_state st;
        uint8_t mac[BD_SHA256_LEN];
        bd_hmac_sha256_init(&st, im->secret, BD_SECRET_LEN);
        bd_hmac_sha256_update(&st, "card-id", 8);
        bd_hmac_sha256_update(&st, digits, n);
        bd_hmac_sha256_update(&st, c.created_at, 20);
        bd_hmac_sha256_update(&st, c.expire_date, 11);
        bd_slice parts[] = {c.leak_id, cvv, c.owner};
        for (size_t i = 0; i < 3; i++) {
            uint32_t len = parts[i].ptr ? (uint32_t)parts[i].len : UINT32_MAX;
            bd_hmac_sha256_update(&st, &len, sizeof len);
            if (parts[i].ptr)
                bd_hmac_sha256_update(&st, parts[i].ptr, parts[i].len);
        }
        bd_hmac_sha256_final(&st, mac);
        sodium_memzero(&st, sizeof st); /* it held the secret's padded key */
        bd_uuid_from_bytes(mac, c.id);
    }
    sodium_memzero(digits, sizeof digits);
    out->u.card = c;
    return bd_check_stage(im, out);
}
