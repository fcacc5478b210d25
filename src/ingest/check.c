/* Import, the checking side: each row read is checked as a breach, a record or a card
 * (fields, normalisation, masking, keyed hashes) and its values staged in the batch that
 * carries it to the writer (import.c). */
#include "ingest/import_impl.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "core/date.h"
#include "core/pwhash.h"
#include "core/sha256.h"
#include "core/utf8.h"
#include "core/uuid.h"
#include "ingest/cvv.h"
#include "ingest/mask.h"
#include "ingest/normalize.h"
#include "store/breach_name.h"

_Static_assert((int)BD_ID_EMAIL == (int)BD_FIELD_EMAIL &&
                   (int)BD_ID_BITCOIN == (int)BD_FIELD_BITCOIN &&
                   (int)BD_ID_COUNT == (int)BD_FIELD_COUNT,
               "identity types and store fields share one order");

/* The field names of each kind of row. */
static const char *const BREACH_FIELDS[] = {"uuid",
                                            "source_name",
                                            "site_domain",
                                            "date_leaked",
                                            "breach_type",
                                            "site_categories",
                                            "site_country",
                                            "site_language",
                                            "password_types",
                                            "leaked_data_types",
                                            "description",
                                            "service_article_url",
                                            "site_logo",
                                            "pwned_count",
                                            "name",
                                            "added_date",
                                            "modified_date",
                                            "is_verified",
                                            "is_fabricated",
                                            "is_sensitive",
                                            "is_retired",
                                            "is_spam_list",
                                            "is_malware",
                                            "is_stealer_log",
                                            "is_subscription_free",
                                            NULL};
static const char *const RECORD_FIELDS[] = {
    "breach_uuid",      "user_name",     "first_name",
    "last_name",        "email",         "email_domain",
    "phone_number",     "ip_address",    "bitcoin_address",
    "password",         "password_hash", "social_security_number",
    "other_attributes", "severity",      "website",
    NULL};
static const char *const CARD_FIELDS[] = {
    "id",         "createdAt", "bank",   "number",   "owner",           "cvv",
    "expireDate", "cvssScore", "leakId", "leakName", "leakPublishDate", "leakDiscoverDate",
    "leakSize",   "leakTags",  NULL};

const char *const *bd_import_field_names(bd_import_kind kind)
{
    return kind == BD_IMPORT_BREACHES  ? BREACH_FIELDS
           : kind == BD_IMPORT_RECORDS ? RECORD_FIELDS
                                       : CARD_FIELDS;
}

bd_result bd_check_reject(importer *im, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(im->why, sizeof im->why, fmt, ap);
    va_end(ap);
    return BD_ERR_INVALID;
}

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* A field's value with surrounding whitespace trimmed; false when absent, null or empty
 * (the interface writes null for a missing value, never ""). */
bool bd_check_get(const importer *im, const char *name, bd_slice *v)
{
    bd_slice t;
    if (!bd_fields_get(im->f, name, &t))
        return false;
    while (t.len && is_space(t.ptr[0])) {
        t.ptr++;
        t.len--;
    }
    while (t.len && is_space(t.ptr[t.len - 1]))
        t.len--;
    if (t.len == 0)
        return false;
    *v = t;
    return true;
}

/* What a field name is made of; an unknown name of anything else is not quoted back. */
static const char NAME_CHARS[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_";

bd_result bd_check_names(importer *im, const char *const *allowed)
{
    for (size_t i = 0; i < bd_fields_count(im->f); i++) {
        const char *name = bd_fields_name(im->f, i);
        const char *const *a = allowed;
        while (*a && ((*a)[0] != name[0] || strcmp(*a, name) != 0))
            a++;
        if (!*a && name[strspn(name, NAME_CHARS)] == '\0' && strlen(name) <= 32)
            return bd_check_reject(im, "unknown field '%s'", name);
        if (!*a) /* a value standing as a name (a CSV file without a header row): not shown */
            return bd_check_reject(im,
                                   "unknown field number %zu (its name is not letters and "
                                   "underscores: does the file start with a header row?)",
                                   i + 1);
    }
    return BD_OK;
}

/* Free text: at most MAX_TEXT bytes, no NUL bytes. Absent gives a NULL slice. */
bd_result bd_check_text(importer *im, const char *name, bd_slice *out)
{
    *out = (bd_slice){NULL, 0};
    bd_slice v;
    if (!bd_check_get(im, name, &v))
        return BD_OK;
    if (v.len > MAX_TEXT)
        return bd_check_reject(im, "%s is longer than %d bytes", name, MAX_TEXT);
    if (memchr(v.ptr, '\0', v.len))
        return bd_check_reject(im, "%s holds a NUL byte", name);
    *out = v;
    return BD_OK;
}

bd_result bd_check_integer(importer *im, const char *name, int64_t *out)
{
    bd_slice v;
    *out = -1;
    if (!bd_check_get(im, name, &v))
        return BD_OK;
    int64_t n = 0;
    for (size_t i = 0; i < v.len; i++) {
        if (v.ptr[i] < '0' || v.ptr[i] > '9' || n > (INT64_MAX - 9) / 10)
            return bd_check_reject(im, "%s must be a whole number of at least 0", name);
        n = n * 10 + (v.ptr[i] - '0');
    }
    *out = n;
    return BD_OK;
}

/* The value slices of a staged row of the given kind; returns how many. All are text but
 * a record's last two (the password and SSN keyed hashes), whose number is *binary. */
static size_t slices_of(bd_import_kind kind, staged *row, bd_slice *out[17], size_t *binary)
{
    *binary = kind == BD_IMPORT_RECORDS ? 2 : 0;
    size_t n = 0;
    if (kind == BD_IMPORT_BREACHES) {
        bd_breach_in *b = &row->u.breach;
        bd_slice *v[] = {&b->source_name,         &b->site_domain,       &b->breach_type,
                         &b->site_categories,     &b->site_country,      &b->site_language,
                         &b->password_types,      &b->leaked_data_types, &b->description,
                         &b->service_article_url, &b->site_logo,         &b->name};
        for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
            out[n++] = v[i];
    } else if (kind == BD_IMPORT_RECORDS) {
        bd_record_in *r = &row->u.record;
        bd_slice *v[] = {
            &r->user_name,       &r->first_name,    &r->last_name,     &r->email,
            &r->email_domain,    &r->phone_number,  &r->ip_address,    &r->bitcoin_address,
            &r->password_masked, &r->password_hash, &r->ssn_masked,    &r->other_attributes,
            &r->website_domain,  &r->user_name_key,   &r->phone_key,     &r->password_hmac, &r->ssn_hmac};
        for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
            out[n++] = v[i];
    } else {
        bd_card_in *c = &row->u.card;
        bd_slice *v[] = {&c->bank, &c->owner, &c->leak_id, &c->leak_name, &c->leak_tags};
        for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
            out[n++] = v[i];
    }
    return n;
}

/* Copies the values of the checked row into the batch's arena. Until the batch is handed
 * over each slice holds its offset there plus one (an absent value stays NULL): the arena
 * may still move as it grows. Text that is not well-formed UTF-8 (routine in old dumps) is
 * stored repaired, each stray byte as U+FFFD, as every reply would show it anyway: so
 * every store holds the same text, and a store that only takes UTF-8 takes it. */
bd_result bd_check_stage(importer *im, staged *row)
{
    bd_slice *v[17];
    size_t binary, n = slices_of(im->o->kind, row, v, &binary);
    for (size_t i = 0; i < n; i++) {
        if (!v[i]->ptr)
            continue;
        size_t at = im->batch->arena.len;
        bool text = i < n - binary;
        bd_result r = text && !bd_utf8_valid(*v[i])
                          ? bd_utf8_append_repaired(&im->batch->arena, *v[i])
                          : bd_buf_append(&im->batch->arena, v[i]->ptr, v[i]->len);
        if (r != BD_OK)
            return r;
        v[i]->len = im->batch->arena.len - at;
        v[i]->ptr = (const char *)(uintptr_t)(at + 1);
    }
    return BD_OK;
}

void bd_import_place_all(bd_import_kind kind, stage_batch *b)
{
    for (size_t k = 0; k < b->n; k++) {
        if (b->rows[k].rejected)
            continue;
        bd_slice *v[17];
        size_t binary, n = slices_of(kind, &b->rows[k], v, &binary);
        for (size_t i = 0; i < n; i++)
            if (v[i]->ptr)
                v[i]->ptr = b->arena.data + ((uintptr_t)v[i]->ptr - 1);
    }
}

/* ---- breaches ---------------------------------------------------------------------- */

/* The optional flags of the HIBP API v3 model, by field name; is_verified is the one that
 * defaults to true, so its bit says the opposite (store.h). */
static const struct {
    const char *name;
    uint32_t bit;
} FLAG_FIELDS[] = {
    {"is_verified", BD_BREACH_UNVERIFIED},
    {"is_fabricated", BD_BREACH_FABRICATED},
    {"is_sensitive", BD_BREACH_SENSITIVE},
    {"is_retired", BD_BREACH_RETIRED},
    {"is_spam_list", BD_BREACH_SPAM_LIST},
    {"is_malware", BD_BREACH_MALWARE},
    {"is_stealer_log", BD_BREACH_STEALER_LOG},
    {"is_subscription_free", BD_BREACH_SUBSCRIPTION_FREE},
};

/* An optional yes/no field: true/false, 1/0 or yes/no in any case; absent leaves *out. */
static bd_result boolean(importer *im, const char *name, bool *out)
{
    static const char *const yes[] = {"true", "1", "yes"}, *const no[] = {"false", "0", "no"};
    bd_slice v;
    if (!bd_check_get(im, name, &v))
        return BD_OK;
    for (size_t i = 0; i < 3; i++) {
        if (v.len == strlen(yes[i]) && strncasecmp(v.ptr, yes[i], v.len) == 0) {
            *out = true;
            return BD_OK;
        }
        if (v.len == strlen(no[i]) && strncasecmp(v.ptr, no[i], v.len) == 0) {
            *out = false;
            return BD_OK;
        }
    }
    return bd_check_reject(im, "%s must be true or false", name);
}

/* An optional UTC time: YYYY-MM-DD, or with a time of day (YYYY-MM-DDTHH:MM:SS, a space for
 * the T, an optional trailing Z). *out gets Unix seconds, 0 when absent. */
static bd_result timestamp(importer *im, const char *name, int64_t *out)
{
    bd_slice v;
    *out = 0;
    if (!bd_check_get(im, name, &v))
        return BD_OK;
    if (v.len == 20 && (v.ptr[19] == 'Z' || v.ptr[19] == 'z'))
        v.len--;
    bd_datetime d;
    if (!bd_date_parse_iso(v, &d) && !bd_datetime_parse(v, &d))
        return bd_check_reject(im, "%s must be YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ (UTC)", name);
    struct tm t = {.tm_year = d.y - 1900,
                   .tm_mon = d.m - 1,
                   .tm_mday = d.d,
                   .tm_hour = d.hh,
                   .tm_min = d.mi,
                   .tm_sec = d.ss};
    *out = (int64_t)timegm(&t);
    if (*out <= 0)
        return bd_check_reject(im, "%s must be after 1970-01-01", name);
    return BD_OK;
}

/* The breach fields of the HIBP API v3 model: Name, times and flags, all optional. */
static bd_result check_hibp_fields(importer *im, bd_breach_in *b)
{
    bd_result r = bd_check_text(im, "name", &b->name);
    if (r == BD_OK && b->name.ptr && !bd_breach_name_valid(b->name))
        r = bd_check_reject(im, "name must be 1 to %d ASCII letters and digits, like AshleyMadison",
                            BD_BREACH_NAME_MAX);
    if (r == BD_OK)
        r = timestamp(im, "added_date", &b->added_at);
    if (r == BD_OK)
        r = timestamp(im, "modified_date", &b->modified_at);
    if (r == BD_OK && b->modified_at && b->modified_at < b->added_at)
        r = bd_check_reject(im, "modified_date is before added_date");
    for (size_t i = 0; r == BD_OK && i < sizeof FLAG_FIELDS / sizeof FLAG_FIELDS[0]; i++) {
        bool unverified_bit = FLAG_FIELDS[i].bit == BD_BREACH_UNVERIFIED;
        bool set = unverified_bit;
        r = boolean(im, FLAG_FIELDS[i].name, &set);
        if (set != unverified_bit)
            b->flags |= FLAG_FIELDS[i].bit;
    }
    return r;
}

bd_result bd_import_check_breach(importer *im, staged *out)
{
    const char *const *names = BREACH_FIELDS;
    bd_breach_in b;
    memset(&b, 0, sizeof b);
    bd_result r = bd_check_names(im, names);
    if (r == BD_OK)
        r = bd_check_text(im, "source_name", &b.source_name);
    if (r == BD_OK && !b.source_name.ptr)
        r = bd_check_reject(im, "source_name is required");
    bd_slice v;
    bd_datetime d;
    if (r == BD_OK) {
        if (!bd_check_get(im, "date_leaked", &v))
            r = bd_check_reject(im, "date_leaked is required");
        else if (!bd_date_parse_iso(v, &d) && !bd_date_parse_dmy(v, &d))
            r = bd_check_reject(im, "date_leaked must be YYYY-MM-DD or DD-Mon-YYYY");
        else
            b.date_leaked = d.y * 10000 + d.m * 100 + d.d;
    }
    struct {
        const char *name;
        bd_slice *dst;
    } texts[] = {{"site_domain", &b.site_domain},
                 {"breach_type", &b.breach_type},
                 {"site_categories", &b.site_categories},
                 {"site_country", &b.site_country},
                 {"site_language", &b.site_language},
                 {"password_types", &b.password_types},
                 {"leaked_data_types", &b.leaked_data_types},
                 {"description", &b.description},
                 {"service_article_url", &b.service_article_url},
                 {"site_logo", &b.site_logo}};
    for (size_t i = 0; r == BD_OK && i < sizeof texts / sizeof texts[0]; i++)
        r = bd_check_text(im, texts[i].name, texts[i].dst);
    if (r == BD_OK)
        r = bd_check_integer(im, "pwned_count", &b.pwned_count);
    if (r == BD_OK)
        r = check_hibp_fields(im, &b);
    if (r != BD_OK)
        return r;
    bool generated = false;
    if (bd_check_get(im, "uuid", &v)) {
        if (!bd_uuid_canonical(v, b.uuid))
            return bd_check_reject(im, "uuid must look like 3f2b8c1e-0d4a-4e1b-9c7d-2a5e6f708192");
    } else {
        /* Derived from the breach's identity, so importing the same file again finds it. */
        bd_sha256_state st;
        uint8_t h[BD_SHA256_LEN];
        bd_sha256_init(&st);
        bd_sha256_update(&st, "breach", 7);
        bd_sha256_update(&st, b.source_name.ptr, b.source_name.len);
        bd_sha256_update(&st, "", 1);
        if (b.site_domain.ptr)
            bd_sha256_update(&st, b.site_domain.ptr, b.site_domain.len);
        bd_sha256_update(&st, &b.date_leaked, sizeof b.date_leaked);
        bd_sha256_final(&st, h);
        bd_uuid_from_bytes(h, b.uuid);
        generated = true;
    }
    out->u.breach = b;
    out->generated = generated;
    return bd_check_stage(im, out);
}

/* ---- breach records ---------------------------------------------------------------- */

typedef struct {
    char buf[BD_NORM_MAX + 1];
    bd_slice v; /* NULL when absent */
} norm_value;

/* Normalises an optional identity field. */
static bd_result identity(importer *im, const char *name, bd_id_type t, norm_value *out)
{
    out->v = (bd_slice){NULL, 0};
    bd_slice v;
    if (!bd_fields_get(im->f, name, &v) || v.len == 0)
        return BD_OK;
    if (t != BD_ID_PASSWORD && !bd_check_get(im, name, &v))
        return BD_OK;
    size_t n;
    const char *why = NULL;
    if (bd_normalize(t, v, out->buf, &n, &why) != BD_OK)
        return bd_check_reject(im, "%s: %s", name, why ? why : "not a valid value");
    out->v = (bd_slice){out->buf, n};
    return BD_OK;
}

static void dedup_add(bd_sha256_state *st, bd_slice v)
{
    uint32_t len = v.ptr ? (uint32_t)v.len : UINT32_MAX;
    bd_sha256_update(st, &len, sizeof len);
    if (v.ptr)
        bd_sha256_update(st, v.ptr, v.len);
}

bd_result bd_import_check_record(importer *im, staged *out)
{
    const char *const *names = RECORD_FIELDS;
    bd_record_in rec;
    memset(&rec, 0, sizeof rec);
    bd_result r = bd_check_names(im, names);
    if (r != BD_OK)
        return r;
    bd_slice v;
    if (bd_check_get(im, "breach_uuid", &v)) {
        if (!bd_uuid_canonical(v, rec.breach_uuid))
            return bd_check_reject(im, "breach_uuid is not a UUID");
    } else if (im->o->breach_uuid) {
        memcpy(rec.breach_uuid, im->o->breach_uuid, BD_UUID_LEN + 1);
    } else {
        return bd_check_reject(im, "breach_uuid is required (or give --breach UUID)");
    }

    norm_value email, domain, phone, user, ip, ssn, password, hash, bitcoin, website;
    if ((r = identity(im, "email", BD_ID_EMAIL, &email)) != BD_OK ||
        (r = identity(im, "email_domain", BD_ID_EMAIL_DOMAIN, &domain)) != BD_OK ||
        (r = identity(im, "phone_number", BD_ID_PHONE, &phone)) != BD_OK ||
        (r = identity(im, "user_name", BD_ID_USERNAME, &user)) != BD_OK ||
        (r = identity(im, "ip_address", BD_ID_IP, &ip)) != BD_OK ||
        (r = identity(im, "social_security_number", BD_ID_SSN, &ssn)) != BD_OK ||
        (r = identity(im, "password", BD_ID_PASSWORD, &password)) != BD_OK ||
        (r = identity(im, "password_hash", BD_ID_PASSWORD_HASH, &hash)) != BD_OK ||
        (r = identity(im, "bitcoin_address", BD_ID_BITCOIN, &bitcoin)) != BD_OK ||
        (r = identity(im, "website", BD_ID_WEBSITE_DOMAIN, &website)) != BD_OK)
        return r;
    if (!email.v.ptr && !domain.v.ptr && !phone.v.ptr && !user.v.ptr && !ip.v.ptr && !ssn.v.ptr &&
        !password.v.ptr && !hash.v.ptr && !bitcoin.v.ptr && !website.v.ptr)
        return bd_check_reject(im, "a record needs at least one searchable field");

    /* The domain of the email wins over a contradicting email_domain column. */
    if (email.v.ptr) {
        const char *at = memchr(email.v.ptr, '@', email.v.len);
        domain.v = (bd_slice){at + 1, email.v.len - (size_t)(at + 1 - email.v.ptr)};
    }
    rec.email = email.v;
    rec.email_domain = domain.v;
    rec.ip_address = ip.v;
    rec.bitcoin_address = bitcoin.v;
    rec.password_hash = hash.v;
    rec.user_name_key = user.v;
    rec.phone_key = phone.v;
    if ((r = bd_check_text(im, "user_name", &rec.user_name)) != BD_OK ||
        (r = bd_check_text(im, "phone_number", &rec.phone_number)) != BD_OK ||
        (r = bd_check_text(im, "first_name", &rec.first_name)) != BD_OK ||
        (r = bd_check_text(im, "last_name", &rec.last_name)) != BD_OK)
        return r;

    char pw_masked[BD_NORM_MAX * 4 + 8];
    uint8_t pw_mac[BD_MAC_LEN], ssn_mac[BD_MAC_LEN];
    char ssn_masked[10];
    if (password.v.ptr) {
        size_t n;
        if (bd_mask_password(password.v, pw_masked, sizeof pw_masked, &n) != BD_OK)
            return bd_check_reject(im, "password is too long");
        rec.password_masked = (bd_slice){pw_masked, n};
        bd_keyed_hash(im->secret, "password", password.v.ptr, password.v.len, pw_mac);
        rec.password_hmac = (bd_slice){(const char *)pw_mac, sizeof pw_mac};
        /* The password ranges' hashes: the record keeps neither; the store counts them
         * apart from it when the record goes in (store.h). */
        if (!im->o->no_password_ranges) {
            rec.has_ranges = true;
            bd_pw_sha1(password.v, rec.password_sha1);
            bd_pw_ntlm(password.v, rec.password_ntlm);
        }
    }
    if (ssn.v.ptr) {
        bd_mask_ssn(ssn.v.ptr, ssn_masked);
        rec.ssn_masked = (bd_slice){ssn_masked, 9};
        bd_keyed_hash(im->secret, "ssn", ssn.v.ptr, ssn.v.len, ssn_mac);
        rec.ssn_hmac = (bd_slice){(const char *)ssn_mac, sizeof ssn_mac};
    }

    char *attrs = NULL;
    json_t *obj = NULL;
    if (bd_check_get(im, "other_attributes", &v)) {
        json_error_t err;
        obj = v.len <= MAX_ATTRIBUTES ? json_loadb(v.ptr, v.len, 0, &err) : NULL;
        if (!json_is_object(obj)) {
            json_decref(obj);
            return bd_check_reject(im, "other_attributes must be a JSON object (at most %d bytes)",
                                   MAX_ATTRIBUTES);
        }
    }
    /* The website's host: a website column's, shown as other_attributes' "site" (where a
     * stealer line's host is) unless that names one already; else other_attributes' "site"
     * when it normalises (a host that does not stays only shown, never rejects the row). */
    if (website.v.ptr) {
        if (!obj)
            obj = json_object();
        if (obj && !json_object_get(obj, "site") &&
            json_object_set_new(obj, "site", json_stringn(website.v.ptr, website.v.len)) != 0) {
            json_decref(obj);
            return BD_ERR_NOMEM;
        }
        if (!obj)
            return BD_ERR_NOMEM;
    } else if (obj) {
        json_t *site = json_object_get(obj, "site");
        size_t n;
        if (json_is_string(site) &&
            bd_normalize(BD_ID_WEBSITE_DOMAIN,
                         (bd_slice){json_string_value(site), json_string_length(site)},
                         website.buf, &n, NULL) == BD_OK)
            website.v = (bd_slice){website.buf, n};
    }
    rec.website_domain = website.v;
    if (obj) {
        attrs = json_dumps(obj, JSON_COMPACT | JSON_PRESERVE_ORDER);
        json_decref(obj);
        if (!attrs)
            return BD_ERR_NOMEM;
        rec.other_attributes = bd_slice_from(attrs);
    }

    rec.severity = password.v.ptr || ssn.v.ptr ? BD_SEVERITY_HIGH
                   : hash.v.ptr                ? BD_SEVERITY_MEDIUM
                                               : BD_SEVERITY_LOW;
    if (bd_check_get(im, "severity", &v)) {
        if (v.len == 3 && strncasecmp(v.ptr, "low", 3) == 0)
            rec.severity = BD_SEVERITY_LOW;
        else if (v.len == 6 && strncasecmp(v.ptr, "medium", 6) == 0)
            rec.severity = BD_SEVERITY_MEDIUM;
        else if (v.len == 4 && strncasecmp(v.ptr, "high", 4) == 0)
            rec.severity = BD_SEVERITY_HIGH;
        else {
            free(attrs);
            return bd_check_reject(im, "severity must be Low, Medium or High");
        }
    }

    bd_sha256_state st;
    uint8_t h[BD_SHA256_LEN];
    bd_sha256_init(&st);
    dedup_add(&st, bd_slice_from(rec.breach_uuid));
    bd_slice parts[] = {rec.user_name,     rec.first_name,    rec.last_name,  rec.email,
                        rec.email_domain,  rec.phone_number,  rec.ip_address, rec.bitcoin_address,
                        rec.password_hmac, rec.password_hash, rec.ssn_hmac,   rec.other_attributes};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        dedup_add(&st, parts[i]);
    bd_sha256_final(&st, h);
    memcpy(rec.dedup, h, sizeof rec.dedup);

    out->u.record = rec;
    r = bd_check_stage(im, out);
    free(attrs);
    return r;
}
