/* Column maps: parsing the --map spec, planning a file's columns once, carrying each row. */
#include "ingest/colmap.h"

#include <stdlib.h>
#include <string.h>

#include "core/json.h"

struct bd_colmap {
    bd_buf names; /* source, NUL, field, NUL, per pair */
    size_t n;
    size_t src[BD_FIELDS_MAX], dst[BD_FIELDS_MAX];
};

static bd_slice trim(const char *p, size_t n)
{
    while (n && p[0] == ' ') {
        p++;
        n--;
    }
    while (n && p[n - 1] == ' ')
        n--;
    return (bd_slice){p, n};
}

static bd_result add_name(bd_colmap *m, bd_slice s, size_t *off)
{
    *off = m->names.len;
    bd_result r = bd_buf_append(&m->names, s.ptr, s.len);
    return r == BD_OK ? bd_buf_append_char(&m->names, '\0') : r;
}

static bd_result parse_pairs(bd_colmap *m, const char *spec, char *why, size_t whylen)
{
    const char *p = spec;
    for (size_t k = 1;; k++) {
        size_t len = strcspn(p, ",");
        const char *eq = memchr(p, '=', len);
        if (!eq) {
            bd_why(why, whylen, "--map: pair %zu has no '=' (Column=field expected)", k);
            return BD_ERR_INVALID;
        }
        bd_slice src = trim(p, (size_t)(eq - p)), dst = trim(eq + 1, len - (size_t)(eq - p) - 1);
        if (!src.len || !dst.len || memchr(dst.ptr, '=', dst.len)) {
            bd_why(why, whylen, "--map: pair %zu needs one column name, '=', one field name", k);
            return BD_ERR_INVALID;
        }
        if (m->n == BD_FIELDS_MAX) {
            bd_why(why, whylen, "--map: more than %d pairs", BD_FIELDS_MAX);
            return BD_ERR_INVALID;
        }
        bd_result r = add_name(m, src, &m->src[m->n]);
        if (r == BD_OK)
            r = add_name(m, dst, &m->dst[m->n]);
        if (r != BD_OK) {
            bd_why(why, whylen, "--map is too long");
            return r;
        }
        for (size_t i = 0; i < m->n; i++) {
            bool same_src = strcmp(bd_colmap_source(m, i), bd_colmap_source(m, m->n)) == 0;
            if (same_src || strcmp(bd_colmap_field(m, i), bd_colmap_field(m, m->n)) == 0) {
                bd_why(why, whylen, "--map: pairs %zu and %zu name the same %s", i + 1, k,
                       same_src ? "column" : "field");
                return BD_ERR_INVALID;
            }
        }
        m->n++;
        if (!p[len])
            return BD_OK;
        p += len + 1;
    }
}

bd_result bd_colmap_parse(const char *spec, bd_colmap **out, char *why, size_t whylen)
{
    *out = NULL;
    bd_colmap *m = malloc(sizeof *m);
    if (!m) {
        bd_why(why, whylen, "out of memory");
        return BD_ERR_NOMEM;
    }
    bd_buf_init(&m->names, 64 * 1024);
    m->n = 0;
    bd_result r = parse_pairs(m, spec, why, whylen);
    if (r != BD_OK) {
        bd_colmap_free(m);
        return r;
    }
    *out = m;
    return BD_OK;
}

void bd_colmap_free(bd_colmap *m)
{
    if (!m)
        return;
    bd_buf_free(&m->names);
    free(m);
}

size_t bd_colmap_count(const bd_colmap *m)
{
    return m ? m->n : 0;
}

const char *bd_colmap_source(const bd_colmap *m, size_t i)
{
    return m->names.data + m->src[i];
}

const char *bd_colmap_field(const bd_colmap *m, size_t i)
{
    return m->names.data + m->dst[i];
}

static bool listed(const char *const *names, const char *name)
{
    while (*names && strcmp(*names, name) != 0)
        names++;
    return *names != NULL;
}

/* The field column i goes to under plan, or NULL. */
static const char *field_of(const bd_colmap *m, const bd_csv_header *h, const int *plan, size_t i)
{
    if (plan[i] >= 0)
        return bd_colmap_field(m, (size_t)plan[i]);
    return plan[i] == BD_COL_SAME ? bd_csv_header_name(h, i) : NULL;
}

bd_result bd_colmap_plan(const bd_colmap *m, const bd_csv_header *h, const char *const *fields,
                         bool drop_unmapped, int plan[BD_FIELDS_MAX], char *why, size_t whylen)
{
    size_t ncol = bd_csv_header_count(h);
    for (size_t i = 0; i < ncol; i++)
        plan[i] = BD_COL_DROP;
    for (size_t k = 0; k < bd_colmap_count(m); k++) {
        if (!listed(fields, bd_colmap_field(m, k))) {
            bd_why(why, whylen, "--map: '%.64s' is not a field of this import",
                   bd_colmap_field(m, k));
            return BD_ERR_INVALID;
        }
        size_t i = 0;
        while (i < ncol && strcmp(bd_csv_header_name(h, i), bd_colmap_source(m, k)) != 0)
            i++;
        if (i == ncol) {
            bd_why(why, whylen, "--map: the file has no column '%.64s'", bd_colmap_source(m, k));
            return BD_ERR_INVALID;
        }
        plan[i] = (int)k;
    }
    bool other = false;
    for (size_t i = 0; i < ncol; i++) {
        if (plan[i] >= 0)
            continue;
        const char *name = bd_csv_header_name(h, i);
        plan[i] = listed(fields, name) ? BD_COL_SAME : drop_unmapped ? BD_COL_DROP : BD_COL_OTHER;
        other = other || plan[i] == BD_COL_OTHER;
    }
    for (size_t i = 0; i < ncol; i++) {
        const char *fi = field_of(m, h, plan, i);
        for (size_t j = 0; fi && j < i; j++) {
            const char *fj = field_of(m, h, plan, j);
            if (fj && strcmp(fi, fj) == 0) {
                bd_why(why, whylen, "columns %zu and %zu would both be the field %s", j + 1, i + 1,
                       fi);
                return BD_ERR_INVALID;
            }
        }
        if (other && fi && strcmp(fi, "other_attributes") == 0) {
            bd_why(why, whylen,
                   "column %zu is other_attributes, where the unmapped columns would "
                   "go: map them or give --drop-unmapped",
                   i + 1);
            return BD_ERR_INVALID;
        }
    }
    if (other && !listed(fields, "other_attributes")) {
        bd_why(why, whylen,
               "this import has no other_attributes for the unmapped columns: map "
               "every column or give --drop-unmapped");
        return BD_ERR_INVALID;
    }
    return BD_OK;
}

bd_result bd_colmap_apply(const bd_colmap *m, const bd_csv_header *h, const int *plan,
                          const bd_fields *in, bd_fields *out, bd_buf *scratch)
{
    bd_fields_clear(out);
    bd_buf_reset(scratch);
    bd_json w;
    bd_json_init(&w, scratch);
    bool any = false;
    bd_result r = BD_OK;
    for (size_t i = 0; i < bd_fields_count(in) && r == BD_OK; i++) {
        bd_slice v;
        bool has = bd_fields_value(in, i, &v);
        const char *field = field_of(m, h, plan, i);
        if (field) {
            r = bd_fields_add(out, field, strlen(field), has ? v.ptr : NULL, has ? v.len : 0);
        } else if (plan[i] == BD_COL_OTHER && has) {
            if (!any)
                bd_json_object_begin(&w);
            any = true;
            bd_json_key(&w, bd_fields_name(in, i));
            bd_json_string(&w, v);
        }
    }
    if (r == BD_OK && any) {
        bd_json_object_end(&w);
        r = bd_json_result(&w);
        if (r == BD_OK)
            r = bd_fields_add(out, "other_attributes", 16, scratch->data, scratch->len);
    }
    return r;
}
