/* Field list of one import record: fixed entry table plus one capped byte buffer. */
#include "ingest/fields.h"

#include <stdlib.h>
#include <string.h>

#include "core/buf.h"

typedef struct {
    size_t name_off, name_len;
    size_t value_off, value_len;
    bool null;
} field;

struct bd_fields {
    bd_buf bytes; /* every name and value, each followed by a NUL byte */
    size_t n;
    field e[BD_FIELDS_MAX];
};

bd_fields *bd_fields_new(void)
{
    bd_fields *f = malloc(sizeof *f);
    if (!f)
        return NULL;
    bd_buf_init(&f->bytes, BD_FIELDS_BYTES_MAX);
    f->n = 0;
    return f;
}

void bd_fields_free(bd_fields *f)
{
    if (!f)
        return;
    bd_buf_free(&f->bytes);
    free(f);
}

void bd_fields_clear(bd_fields *f)
{
    bd_buf_reset(&f->bytes);
    f->n = 0;
}

/* Appends p[0..n) and a NUL byte; on error the buffer is as before. */
static bd_result append_with_nul(bd_buf *b, const char *p, size_t n)
{
    size_t before = b->len;
    bd_result r = bd_buf_append(b, p, n);
    if (r == BD_OK)
        r = bd_buf_append_char(b, '\0');
    if (r != BD_OK) {
        b->len = before;
        if (b->data)
            b->data[before] = '\0';
    }
    return r;
}

bd_result bd_fields_add(bd_fields *f, const char *name, size_t name_len, const char *value,
                        size_t value_len)
{
    if (name_len == 0 || memchr(name, '\0', name_len))
        return BD_ERR_INVALID;
    if (f->n == BD_FIELDS_MAX)
        return BD_ERR_LIMIT;
    size_t before = f->bytes.len;
    field *e = &f->e[f->n];
    e->name_off = before;
    e->name_len = name_len;
    bd_result r = append_with_nul(&f->bytes, name, name_len);
    if (r != BD_OK)
        return r;
    e->null = value == NULL;
    e->value_off = f->bytes.len;
    e->value_len = e->null ? 0 : value_len;
    r = append_with_nul(&f->bytes, e->null ? "" : value, e->value_len);
    if (r != BD_OK) {
        f->bytes.len = before;
        f->bytes.data[before] = '\0';
        return r;
    }
    f->n++;
    return BD_OK;
}

bd_result bd_fields_append(bd_fields *f, const char *p, size_t n)
{
    if (f->n == 0 || f->e[f->n - 1].null)
        return BD_ERR_INVALID;
    field *e = &f->e[f->n - 1];
    f->bytes.len--; /* the value's NUL, always the last byte */
    bd_result r = append_with_nul(&f->bytes, p, n);
    if (r != BD_OK) {
        f->bytes.data[f->bytes.len++] = '\0';
        return r;
    }
    e->value_len += n;
    return BD_OK;
}

/* The index of the field named by the len bytes at name, or f->n. Lengths first: a row's
 * checks ask for some twenty names, and a parser asks for each name against every one
 * before it; most differ in length (strcmp with the first byte alone was 3% of a 1M-record
 * import's checking thread, strncmp of each pair of names 5% of a 1M-card one's). */
static size_t find(const bd_fields *f, const char *name, size_t len)
{
    for (size_t i = 0; i < f->n; i++) {
        const char *n = f->bytes.data + f->e[i].name_off; /* names are never empty */
        if (f->e[i].name_len == len && n[0] == name[0] && memcmp(n, name, len) == 0)
            return i;
    }
    return f->n;
}

bool bd_fields_get(const bd_fields *f, const char *name, bd_slice *v)
{
    size_t i = find(f, name, strlen(name));
    return i < f->n && bd_fields_value(f, i, v);
}

bool bd_fields_has(const bd_fields *f, const char *name, size_t len)
{
    return find(f, name, len) < f->n;
}

size_t bd_fields_count(const bd_fields *f)
{
    return f->n;
}

const char *bd_fields_name(const bd_fields *f, size_t i)
{
    return f->bytes.data + f->e[i].name_off;
}

bool bd_fields_value(const bd_fields *f, size_t i, bd_slice *v)
{
    if (f->e[i].null)
        return false;
    v->ptr = f->bytes.data + f->e[i].value_off;
    v->len = f->e[i].value_len;
    return true;
}
