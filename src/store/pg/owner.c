/* The owner key of a record: the column records are distributed by in a Citus cluster
 * (docs/SCALING.md), kept on a single server too, so that one schema serves both.
 *
 * It is the first 16 bytes of SHA-256("tag:value") over the record's first identity, in
 * the order of an identity count (breaches.c): email, user name, phone, IP address,
 * bitcoin address, SSN, password hash, then password; the keyed hashes of SSN and password
 * as lower-case hex, never their secrets. A record without any identity is keyed by its
 * dedup hash. All records of one email therefore share one owner key: an email search, the
 * hot path, names a single shard, and so does an erasure by email.
 *
 * Unkeyed on purpose: migration 8 (schema.c) computes the same digest in SQL for the rows it
 * finds, and the unit tests hold the two to the same values. */
#include <sodium.h>
#include <stddef.h>
#include <string.h>

#include "core/sha256.h"
#include "store/pg/pg_impl.h"

static void digest(const char *tag, const unsigned char *v, size_t len, bool hex,
                   uint8_t out[PG_OWNER_KEY_LEN])
{
    bd_sha256_state st;
    bd_sha256_init(&st);
    bd_sha256_update(&st, tag, strlen(tag));
    bd_sha256_update(&st, ":", 1);
    if (hex) {
        char h[3];
        for (size_t i = 0; i < len; i++) {
            sodium_bin2hex(h, sizeof h, v + i, 1);
            bd_sha256_update(&st, h, 2);
        }
    } else {
        bd_sha256_update(&st, v, len);
    }
    uint8_t full[BD_SHA256_LEN];
    bd_sha256_final(&st, full);
    memcpy(out, full, PG_OWNER_KEY_LEN);
}

void pg_email_owner_key(bd_slice email, uint8_t out[PG_OWNER_KEY_LEN])
{
    digest("email", (const unsigned char *)email.ptr, email.len, false, out);
}

void pg_owner_key(const bd_record_in *r, uint8_t out[PG_OWNER_KEY_LEN])
{
    static const struct {
        const char *tag;
        size_t at; /* offset of the slice in bd_record_in */
        bool hex;
    } ORDER[] = {
        {"email", offsetof(bd_record_in, email), false},
        {"user", offsetof(bd_record_in, user_name_key), false},
        {"phone", offsetof(bd_record_in, phone_key), false},
        {"ip", offsetof(bd_record_in, ip_address), false},
        {"bitcoin", offsetof(bd_record_in, bitcoin_address), false},
        {"ssn", offsetof(bd_record_in, ssn_hmac), true},
        {"hash", offsetof(bd_record_in, password_hash), false},
        {"password", offsetof(bd_record_in, password_hmac), true},
    };
    for (size_t i = 0; i < sizeof ORDER / sizeof ORDER[0]; i++) {
        const bd_slice *v = (const bd_slice *)((const char *)r + ORDER[i].at);
        if (v->ptr) {
            digest(ORDER[i].tag, (const unsigned char *)v->ptr, v->len, ORDER[i].hex, out);
            return;
        }
    }
    digest("record", r->dedup, sizeof r->dedup, true, out);
}
