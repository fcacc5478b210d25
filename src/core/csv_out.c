/* CSV cells (csv_out.h). */
#include <stdio.h>
#include <string.h>

#include "core/csv_out.h"

static bool needs_guard(bd_slice v)
{
    if (v.len == 0)
        return false;
    char c = v.ptr[0];
    return c == '=' || c == '+' || c == '-' || c == '@' || c == '\t' || c == '\r';
}

static bool needs_quotes(bd_slice v)
{
    for (size_t i = 0; i < v.len; i++) {
        char c = v.ptr[i];
        if (c == ',' || c == '"' || c == '\r' || c == '\n')
            return true;
    }
    return false;
}

static bd_result cell(bd_buf *b, bd_slice v, bool quoted)
{
    bd_result r = quoted ? bd_buf_append(b, "\"", 1) : BD_OK;
    if (r == BD_OK && needs_guard(v))
        r = bd_buf_append(b, "'", 1);
    size_t from = 0;
    for (size_t i = 0; r == BD_OK && i < v.len; i++) {
        if (v.ptr[i] != '"')
            continue;
        r = bd_buf_append(b, v.ptr + from, i + 1 - from); /* through the quote, then again */
        if (r == BD_OK)
            r = bd_buf_append(b, "\"", 1);
        from = i + 1;
    }
    if (r == BD_OK)
        r = bd_buf_append(b, v.ptr + from, v.len - from);
    if (r == BD_OK && quoted)
        r = bd_buf_append(b, "\"", 1);
    return r;
}

bd_result bd_csv_cell(bd_buf *b, bd_slice v, bool first)
{
    bd_result r = first ? BD_OK : bd_buf_append(b, ",", 1);
    if (r != BD_OK || !v.ptr)
        return r;
    return cell(b, v, needs_quotes(v));
}

bd_result bd_csv_cell_quoted(bd_buf *b, bd_slice v)
{
    return v.ptr && v.len ? cell(b, v, true) : BD_OK;
}

bd_result bd_csv_int(bd_buf *b, int64_t v, bool first)
{
    char t[24];
    int n = snprintf(t, sizeof t, "%lld", (long long)v);
    bd_result r = first ? BD_OK : bd_buf_append(b, ",", 1);
    return r == BD_OK ? bd_buf_append(b, t, (size_t)n) : r;
}

bd_result bd_csv_double(bd_buf *b, double v, bool present, bool first)
{
    bd_result r = first ? BD_OK : bd_buf_append(b, ",", 1);
    if (r != BD_OK || !present || v != v || v - v != 0)
        return r;
    char t[32];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(t, sizeof t, "%.*g", prec, v);
        double back;
        if (sscanf(t, "%lf", &back) == 1 && back == v)
            break;
    }
    return bd_buf_append(b, t, strlen(t));
}

bd_result bd_csv_row_end(bd_buf *b)
{
    return bd_buf_append(b, "\r\n", 2);
}

bd_result bd_csv_header(bd_buf *b, const char *const *names)
{
    bd_result r = BD_OK;
    for (size_t i = 0; r == BD_OK && names[i]; i++)
        r = bd_csv_cell(b, bd_slice_from(names[i]), i == 0);
    return r == BD_OK ? bd_csv_row_end(b) : r;
}
