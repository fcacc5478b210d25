/* libFuzzer target: arbitrary bytes as a CSV header line and one record (and the same as TSV).
 * Checks that the incremental scanner agrees with itself however the bytes are split, that an
 * incomplete or ill-formed record never parses, and that a parsed row has one field per column;
 * card-number and masking helpers run on every value. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/csv.h"
#include "ingest/fields.h"
#include "ingest/mask.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_value(bd_slice v)
{
    char digits[20], masked[20];
    size_t n = 0;
    if (bd_card_digits(v, digits, &n)) {
        if (n < 12 || n > 19 || strlen(digits) != n)
            abort();
        bd_mask_card(digits, n, masked);
        if (strlen(masked) != n || memcmp(masked, digits, 6) != 0 ||
            memcmp(masked + n - 4, digits + n - 4, 4) != 0)
            abort();
    }
    char pw[64];
    size_t pwlen;
    bd_result r = bd_mask_password(v, pw, sizeof pw, &pwlen);
    if (r == BD_OK && pwlen > v.len)
        abort();
}

/* The TSV dialect (tab, no quoting): a header and a row split at tabs only, so a parsed row
 * has exactly one more cell than it has tabs, each cell byte for byte. */
static void check_tsv(const char *p, size_t hlen, const char *rec, size_t rlen)
{
    static bd_csv_header *t;
    static bd_fields *tf;
    if (!t) {
        t = bd_csv_header_new();
        tf = bd_fields_new();
        if (!t || !tf)
            abort();
    }
    char why[256];
    bd_csv_header_set_dialect(t, '\t', false);
    if (bd_csv_parse_header(p, hlen, t, why, sizeof why) != BD_OK)
        return;
    if (bd_csv_parse_row(t, rec, rlen, tf, why, sizeof why) != BD_OK)
        return;
    size_t n = rlen && rec[rlen - 1] == '\r' ? rlen - 1 : rlen, tabs = 0, at = 0;
    for (size_t i = 0; i < n; i++)
        tabs += rec[i] == '\t';
    if (bd_fields_count(tf) != tabs + 1)
        abort();
    for (size_t i = 0; i < bd_fields_count(tf); i++) {
        bd_slice v = {"", 0};
        bool has = bd_fields_value(tf, i, &v);
        if ((!has && at < n && rec[at] != '\t') || memcmp(v.ptr, rec + at, v.len) != 0)
            abort();
        at += v.len + 1;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static bd_csv_header *h;
    static bd_fields *f;
    if (!h) {
        h = bd_csv_header_new();
        f = bd_fields_new();
        if (!h || !f)
            abort();
    }
    const char *p = (const char *)data;
    bool whole = bd_csv_record_complete(p, size);
    for (size_t cut = 0; cut <= size; cut += 1 + size / 7) {
        bd_csv_scan s;
        bd_csv_scan_init(&s);
        bd_csv_scan_feed(&s, p, cut);
        if (bd_csv_scan_feed(&s, p + cut, size - cut) != whole)
            abort();
    }

    const char *nl = memchr(p, '\n', size);
    size_t hlen = nl ? (size_t)(nl - p) : size;
    char why[256];
    if (bd_csv_parse_header(p, hlen, h, why, sizeof why) != BD_OK) {
        if (bd_csv_header_count(h) != 0)
            abort();
        const char *rec = nl ? nl + 1 : p + size;
        check_tsv(p, hlen, rec, (size_t)(p + size - rec));
        return 0;
    }
    const char *rec = nl ? nl + 1 : p + size;
    size_t rlen = (size_t)(p + size - rec);
    check_tsv(p, hlen, rec, rlen);
    bd_result r = bd_csv_parse_row(h, rec, rlen, f, why, sizeof why);
    if (r == BD_OK && !bd_csv_record_complete(rec, rlen))
        abort();
    if (r == BD_OK && !bd_csv_record_well_formed(rec, rlen))
        abort(); /* the reader's stray-quote test never throws away a good record */
    if (r != BD_OK) {
        if (bd_fields_count(f) != 0)
            abort();
        return 0;
    }
    if (bd_fields_count(f) != bd_csv_header_count(h))
        abort();
    for (size_t i = 0; i < bd_fields_count(f); i++) {
        if (strcmp(bd_fields_name(f, i), bd_csv_header_name(h, i)) != 0)
            abort();
        bd_slice v;
        if (bd_fields_value(f, i, &v))
            check_value(v);
    }
    return 0;
}
