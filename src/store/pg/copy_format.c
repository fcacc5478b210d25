/* The COPY binary format: the rows puts stream (copy.c) and the landed rows a move returns. */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "store/pg/pg_impl.h"

bd_result pg_copy_put_u16(bd_buf *b, uint16_t v)
{
    uint16_t n = htons(v);
    return bd_buf_append(b, &n, sizeof n);
}

/* Appends a field: its 4-byte length word (UINT32_MAX: NULL), then its n bytes at p, in one
 * reservation. A record is some 25 fields, and two appends for each were 6% of a 1M-record
 * bulk load's client samples. */
static bd_result put_field(bd_buf *b, uint32_t len_word, const void *p, size_t n)
{
    bd_result r = bd_buf_reserve(b, 4 + n);
    if (r != BD_OK)
        return r;
    char *at = b->data + b->len;
    uint32_t w = htonl(len_word);
    memcpy(at, &w, sizeof w);
    if (n)
        memcpy(at + sizeof w, p, n);
    b->len += sizeof w + n;
    b->data[b->len] = '\0';
    return BD_OK;
}

bd_result pg_copy_put_int(bd_buf *b, int64_t v, int size)
{
    uint8_t be[8];
    for (int i = 0; i < size; i++) /* big-endian: the last byte is the lowest */
        be[i] = (uint8_t)((uint64_t)v >> (8 * (size - 1 - i)));
    return put_field(b, (uint32_t)size, be, (size_t)size);
}

bd_result pg_copy_put_bytes(bd_buf *b, bd_slice v)
{
    if (!v.ptr)
        return put_field(b, UINT32_MAX, NULL, 0);
    if (v.len > INT32_MAX)
        return BD_ERR_LIMIT;
    return put_field(b, (uint32_t)v.len, v.ptr, v.len);
}

bd_result pg_copy_record_columns(bd_buf *b, const uint8_t *ok, int64_t breach_id, int32_t date,
                                 const bd_record_in *r)
{
    bd_result res = pg_copy_put_bytes(b, (bd_slice){(const char *)ok, PG_OWNER_KEY_LEN});
    if (res == BD_OK)
        res = pg_copy_put_int(b, breach_id, 8);
    if (res == BD_OK)
        res = pg_copy_put_int(b, date, 4);
    const bd_slice *text[] = {
        &r->user_name,     &r->user_name_key,   &r->first_name,      &r->last_name,
        &r->email,         &r->email_domain,    &r->phone_number,    &r->phone_key,
        &r->ip_address,    &r->bitcoin_address, &r->password_masked, &r->password_hmac,
        &r->password_hash, &r->ssn_masked,      &r->ssn_hmac,        &r->other_attributes,
    };
    for (size_t i = 0; i < sizeof text / sizeof text[0] && res == BD_OK; i++)
        res = pg_copy_put_bytes(b, *text[i]);
    if (res == BD_OK)
        res = pg_copy_put_int(b, (int64_t)r->severity, 2);
    if (res == BD_OK)
        res = pg_copy_put_bytes(b, (bd_slice){(const char *)r->dedup, sizeof r->dedup});
    if (res == BD_OK)
        res = pg_copy_put_bytes(b, r->website_domain);
    return res;
}

bd_result pg_copy_password_row(bd_buf *b, const uint8_t *ok, const bd_record_in *r)
{
    size_t mark = b->len;
    bd_result res = pg_copy_put_u16(b, 4);
    if (res == BD_OK)
        res = pg_copy_put_bytes(b, (bd_slice){(const char *)ok, PG_OWNER_KEY_LEN});
    if (res == BD_OK)
        res = pg_copy_put_bytes(b, (bd_slice){(const char *)r->dedup, sizeof r->dedup});
    if (res == BD_OK)
        res = pg_copy_put_bytes(
            b, (bd_slice){(const char *)r->password_sha1, sizeof r->password_sha1});
    if (res == BD_OK)
        res = pg_copy_put_bytes(
            b, (bd_slice){(const char *)r->password_ntlm, sizeof r->password_ntlm});
    if (res != BD_OK)
        bd_buf_truncate(b, mark);
    return res;
}

bd_result pg_copy_domain_row(bd_buf *b, const uint8_t *ok, int64_t id, int32_t date,
                             const bd_record_in *r)
{
    if (!r->email_domain.ptr)
        return BD_OK;
    /* PG_RECORD_PRESENT_SQL's bits: bit f when the record has field f, over the columns
     * pg_copy_record_columns writes (NULL there exactly when the key's ptr is NULL) */
    bd_slice key[BD_FIELD_COUNT];
    bd_record_keys(r, key);
    int present = 0;
    for (int f = 0; f < BD_FIELD_COUNT; f++)
        if (key[f].ptr)
            present |= 1 << f;
    size_t mark = b->len;
    bd_result res = pg_copy_put_u16(b, 5);
    if (res == BD_OK)
        res = pg_copy_put_bytes(b, r->email_domain);
    if (res == BD_OK)
        res = pg_copy_put_bytes(b, (bd_slice){(const char *)ok, PG_OWNER_KEY_LEN});
    if (res == BD_OK)
        res = pg_copy_put_int(b, id, 8);
    if (res == BD_OK)
        res = pg_copy_put_int(b, date, 4);
    if (res == BD_OK)
        res = pg_copy_put_int(b, present, 2);
    if (res != BD_OK)
        bd_buf_truncate(b, mark);
    return res;
}

/* A C string field; "" is NULL when empty_is_null. */
static bd_result put_str(bd_buf *b, const char *v, bool empty_is_null)
{
    return pg_copy_put_bytes(b, (bd_slice){empty_is_null && !v[0] ? NULL : v, strlen(v)});
}

bd_result pg_copy_card_columns(bd_buf *b, const bd_card_in *c)
{
    char tail[5] = {c->last4[3], c->last4[2], c->last4[1], c->last4[0], '\0'};
    bd_result r = put_str(b, c->id, false);
    if (r == BD_OK)
        r = put_str(b, c->created_at, false);
    if (r == BD_OK)
        r = pg_copy_put_bytes(b, c->bank);
    if (r == BD_OK)
        r = put_str(b, c->number_masked, false);
    if (r == BD_OK)
        r = put_str(b, c->bin, false);
    if (r == BD_OK)
        r = put_str(b, c->last4, false);
    if (r == BD_OK)
        r = put_str(b, tail, false);
    if (r == BD_OK)
        r = pg_copy_put_int(b, c->length, 2);
    if (r == BD_OK)
        r = pg_copy_put_bytes(b, (bd_slice){(const char *)c->number_hmac, BD_HMAC_LEN});
    if (r == BD_OK)
        r = pg_copy_put_bytes(b, c->owner);
    if (r == BD_OK)
        r = put_str(b, c->cvv_masked, true);
    if (r == BD_OK)
        r = put_str(b, c->expire_date, true);
    if (r == BD_OK && c->has_cvss) {
        double v = c->cvss + 0.0; /* -0 is 0, as SQLite keeps it */
        uint64_t bits;
        memcpy(&bits, &v, sizeof bits);
        r = pg_copy_put_int(b, (int64_t)bits, 8);
    } else if (r == BD_OK) {
        r = pg_copy_put_bytes(b, (bd_slice){NULL, 0});
    }
    if (r == BD_OK)
        r = pg_copy_put_bytes(b, c->leak_id);
    if (r == BD_OK)
        r = pg_copy_put_bytes(b, c->leak_name);
    if (r == BD_OK)
        r = put_str(b, c->leak_publish_date, true);
    if (r == BD_OK)
        r = put_str(b, c->leak_discover_date, true);
    if (r == BD_OK)
        r = c->leak_size >= 0 ? pg_copy_put_int(b, c->leak_size, 8)
                              : pg_copy_put_bytes(b, (bd_slice){NULL, 0});
    if (r == BD_OK)
        r = pg_copy_put_bytes(b, c->leak_tags);
    if (r == BD_OK)
        r = pg_copy_put_bytes(
            b, (bd_slice){c->cvv_masked[0] ? (const char *)c->cvv_hmac : NULL, BD_HMAC_LEN});
    return r;
}

/* The next word of a space-separated list at *at, or a slice with ptr NULL at its end. */
static bd_slice next_word(bd_slice words, size_t *at)
{
    if (*at >= words.len)
        return (bd_slice){NULL, 0};
    size_t from = *at, n = 0;
    while (from + n < words.len && words.ptr[from + n] != ' ')
        n++;
    *at = from + n + 1;
    return (bd_slice){words.ptr + from, n};
}

static int slice_order(const void *a, const void *b)
{
    const bd_slice *x = a, *y = b;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->ptr, y->ptr, n);
    return c ? c : (x->len > y->len) - (x->len < y->len);
}

/* card_words rows (col, word, id, pos) of one column's words. */
static bd_result put_word_rows(bd_buf *b, int col, bd_slice words, int64_t id)
{
    bd_result r = BD_OK;
    size_t at = 0;
    int32_t pos = 0;
    for (bd_slice w = next_word(words, &at); w.ptr && r == BD_OK; w = next_word(words, &at)) {
        r = pg_copy_put_u16(b, 4);
        if (r == BD_OK)
            r = pg_copy_put_int(b, col, 2);
        if (r == BD_OK)
            r = pg_copy_put_bytes(b, w);
        if (r == BD_OK)
            r = pg_copy_put_int(b, id, 8);
        if (r == BD_OK)
            r = pg_copy_put_int(b, ++pos, 4);
    }
    return r;
}

/* card_owner_words rows (word, expire_date, card_id): each owner word once, for a card with
 * an expiry. */
static bd_result put_owner_word_rows(pg_copy_state *cs, const bd_card_in *c, bd_slice words)
{
    if (!c->expire_date[0])
        return BD_OK;
    size_t n = 0, at = 0;
    for (bd_slice w = next_word(words, &at); w.ptr; w = next_word(words, &at)) {
        if (n == cs->wordv_cap) {
            size_t cap = n ? n * 2 : 64;
            bd_slice *v = realloc(cs->wordv, cap * sizeof *v);
            if (!v)
                return BD_ERR_NOMEM;
            cs->wordv = v;
            cs->wordv_cap = cap;
        }
        cs->wordv[n++] = w;
    }
    qsort(cs->wordv, n, sizeof *cs->wordv, slice_order);
    bd_buf *b = &cs->owner_word_rows;
    bd_result r = BD_OK;
    for (size_t i = 0; i < n && r == BD_OK; i++) {
        if (i > 0 && slice_order(&cs->wordv[i - 1], &cs->wordv[i]) == 0)
            continue;
        r = pg_copy_put_u16(b, 3);
        if (r == BD_OK)
            r = pg_copy_put_bytes(b, cs->wordv[i]);
        if (r == BD_OK)
            r = put_str(b, c->expire_date, false);
        if (r == BD_OK)
            r = put_str(b, c->id, false);
    }
    return r;
}

bd_result pg_copy_card_word_rows(pg_copy_state *cs, int64_t id, const bd_card_in *c,
                                 bd_slice owner_words, bd_slice bank_words)
{
    size_t words_mark = cs->word_rows.len, owner_mark = cs->owner_word_rows.len;
    bd_result r = put_word_rows(&cs->word_rows, 0, owner_words, id);
    if (r == BD_OK)
        r = put_word_rows(&cs->word_rows, 1, bank_words, id);
    if (r == BD_OK)
        r = put_owner_word_rows(cs, c, owner_words);
    if (r != BD_OK) { /* the card's word rows go with it */
        bd_buf_truncate(&cs->word_rows, words_mark);
        bd_buf_truncate(&cs->owner_word_rows, owner_mark);
    }
    return r;
}

bd_slice pg_copy_binary_field(const PGresult *res, int row, int col)
{
    if (PQgetisnull(res, row, col))
        return (bd_slice){NULL, 0};
    return (bd_slice){PQgetvalue(res, row, col), (size_t)PQgetlength(res, row, col)};
}

void pg_copy_landed_record(pg_store *p, const PGresult *res, int i)
{
    bd_landed_row l = {0};
    const char *id = PQgetvalue(res, i, 2);
    uint64_t v = 0;
    for (int b = 0; b < 8 && PQgetlength(res, i, 2) == 8; b++)
        v = v << 8 | (uint8_t)id[b];
    l.breach_id = (int64_t)v;
    static const bd_field KEYS[] = {
        BD_FIELD_EMAIL, BD_FIELD_EMAIL_DOMAIN, BD_FIELD_PHONE,         BD_FIELD_USERNAME,
        BD_FIELD_IP,    BD_FIELD_SSN,          BD_FIELD_PASSWORD,      BD_FIELD_PASSWORD_HASH,
        BD_FIELD_BITCOIN,
    };
    for (int k = 0; k < 9; k++)
        l.key[KEYS[k]] = pg_copy_binary_field(res, i, 3 + k);
    l.shown[BD_FIELD_EMAIL] = l.key[BD_FIELD_EMAIL];
    l.shown[BD_FIELD_EMAIL_DOMAIN] = l.key[BD_FIELD_EMAIL];
    l.shown[BD_FIELD_IP] = l.key[BD_FIELD_IP];
    l.shown[BD_FIELD_PASSWORD_HASH] = l.key[BD_FIELD_PASSWORD_HASH];
    l.shown[BD_FIELD_BITCOIN] = l.key[BD_FIELD_BITCOIN];
    l.shown[BD_FIELD_PHONE] = pg_copy_binary_field(res, i, 12);
    l.shown[BD_FIELD_USERNAME] = pg_copy_binary_field(res, i, 13);
    l.shown[BD_FIELD_SSN] = pg_copy_binary_field(res, i, 14);
    l.shown[BD_FIELD_PASSWORD] = pg_copy_binary_field(res, i, 15);
    l.key[BD_FIELD_WEBSITE_DOMAIN] = l.shown[BD_FIELD_WEBSITE_DOMAIN] =
        pg_copy_binary_field(res, i, 16);
    p->landed(p->landed_ctx, &l);
}

/* The password hashes of the records a move put in (binary result: sha1, ntlm), added to
 * the open transaction's ranges (ranges.c merges them before it commits). */
bd_result pg_range_add_moved(pg_store *p, const PGresult *res)
{
    bd_result r = BD_OK;
    for (int i = 0, n = PQntuples(res); i < n && r == BD_OK; i++) {
        if (PQgetisnull(res, i, 0) || PQgetlength(res, i, 0) != BD_SHA1_LEN ||
            PQgetisnull(res, i, 1) || PQgetlength(res, i, 1) != BD_NTLM_LEN)
            continue;
        r = bd_range_acc_add(&p->ranges, BD_RANGE_SHA1, (const uint8_t *)PQgetvalue(res, i, 0), 1,
                             BD_RANGE_ADD);
        if (r == BD_OK)
            r = bd_range_acc_add(&p->ranges, BD_RANGE_NTLM, (const uint8_t *)PQgetvalue(res, i, 1),
                                 1, BD_RANGE_ADD);
    }
    return r;
}
