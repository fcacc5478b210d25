/* CSV output cells (core/csv_out.h) and the Accept header's choice of CSV (http/accept.h). */
#include <stdio.h>
#include <string.h>

#include "core/csv_out.h"
#include "http/accept.h"
#include "test.h"

static const char *row(const char *const *cells, size_t n)
{
    static bd_buf b;
    static bool init;
    if (!init) {
        bd_buf_init(&b, 4096);
        init = true;
    }
    bd_buf_reset(&b);
    for (size_t i = 0; i < n; i++)
        CHECK_INT(bd_csv_cell(&b, bd_slice_from(cells[i]), i == 0), BD_OK);
    CHECK_INT(bd_csv_row_end(&b), BD_OK);
    CHECK_INT(bd_buf_append(&b, "", 1), BD_OK);
    return b.data;
}

TEST(test_csv_cells_are_quoted_only_when_needed)
{
    const char *plain[] = {"a", "", NULL, "b c"};
    CHECK_STR(row(plain, 4), "a,,,b c\r\n");
    const char *special[] = {"x,y", "say \"hi\"", "two\nlines", "cr\rhere"};
    CHECK_STR(row(special, 4), "\"x,y\",\"say \"\"hi\"\"\",\"two\nlines\",\"cr\rhere\"\r\n");
}

TEST(test_csv_formula_cells_are_guarded)
{
    const char *formulas[] = {"=1+1", "+1", "-1", "@SUM(A1)", "\tx", "\rx", "a=b"};
    CHECK_STR(row(formulas, 7), "'=1+1,'+1,'-1,'@SUM(A1),'\tx,\"'\rx\",a=b\r\n");
    const char *quoted[] = {"=HYPERLINK(\"u\",\"t\")"};
    CHECK_STR(row(quoted, 1), "\"'=HYPERLINK(\"\"u\"\",\"\"t\"\")\"\r\n");
}

TEST(test_csv_numbers_and_header)
{
    bd_buf b;
    bd_buf_init(&b, 256);
    const char *names[] = {"id", "n", "score", "none", NULL};
    CHECK_INT(bd_csv_header(&b, names), BD_OK);
    CHECK_INT(bd_csv_int(&b, -42, true), BD_OK);
    CHECK_INT(bd_csv_int(&b, 9007199254740993LL, false), BD_OK);
    CHECK_INT(bd_csv_double(&b, 7.5, true, false), BD_OK);
    CHECK_INT(bd_csv_double(&b, 1.0, false, false), BD_OK);
    CHECK_INT(bd_csv_double(&b, 0.1, true, false), BD_OK);
    CHECK_INT(bd_csv_row_end(&b), BD_OK);
    CHECK_INT(bd_buf_append(&b, "", 1), BD_OK);
    CHECK_STR(b.data, "id,n,score,none\r\n-42,9007199254740993,7.5,,0.1\r\n");
    bd_buf_free(&b);
}

TEST(test_accept_chooses_csv_only_when_preferred)
{
    CHECK(bd_accept_prefers_csv("text/csv"));
    CHECK(bd_accept_prefers_csv("Text/CSV"));
    CHECK(bd_accept_prefers_csv("text/csv; charset=utf-8"));
    CHECK(bd_accept_prefers_csv("text/csv, */*"));
    CHECK(bd_accept_prefers_csv("application/json;q=0.9, text/csv"));
    CHECK(bd_accept_prefers_csv(" text/csv ;q=1.000 , application/*;q=0.2"));
    CHECK(!bd_accept_prefers_csv(NULL));
    CHECK(!bd_accept_prefers_csv(""));
    CHECK(!bd_accept_prefers_csv("*/*"));
    CHECK(!bd_accept_prefers_csv("application/json"));
    CHECK(!bd_accept_prefers_csv("text/csv, application/json"));      /* a tie: JSON */
    CHECK(!bd_accept_prefers_csv("text/csv;q=0.5, */*"));              /* a wildcard above */
    CHECK(!bd_accept_prefers_csv("text/csv;q=0"));
    CHECK(!bd_accept_prefers_csv("text/csv;q=2"));                     /* malformed: skipped */
    CHECK(!bd_accept_prefers_csv("text/csv;q=0.5555"));
    CHECK(!bd_accept_prefers_csv("text/csvx, text/cs"));
    CHECK(!bd_accept_prefers_csv(",;=,q=1;,"));
}

static const char *quoted_cell(const char *v, char out[64])
{
    bd_buf b;
    bd_buf_init(&b, 64);
    CHECK_INT(bd_csv_cell_quoted(&b, v ? (bd_slice){v, strlen(v)} : (bd_slice){NULL, 0}), BD_OK);
    snprintf(out, 64, "%.*s", (int)b.len, b.len ? b.data : "");
    bd_buf_free(&b);
    return out;
}

/* A bulk job's CSV results quote every cell. */
TEST(test_csv_always_quoted_cells_are_never_formulas)
{
    char out[64];
    CHECK_STR(quoted_cell(NULL, out), "");
    CHECK_STR(quoted_cell("", out), "");
    CHECK_STR(quoted_cell("plain", out), "\"plain\"");
    CHECK_STR(quoted_cell("a \"b\", c", out), "\"a \"\"b\"\", c\"");
    CHECK_STR(quoted_cell("=1+1", out), "\"'=1+1\"");
    CHECK_STR(quoted_cell("+1", out), "\"'+1\"");
    CHECK_STR(quoted_cell("-1", out), "\"'-1\"");
    CHECK_STR(quoted_cell("@x", out), "\"'@x\"");
    CHECK_STR(quoted_cell("\tx", out), "\"'\tx\"");
    CHECK_STR(quoted_cell("\rx", out), "\"'\rx\"");
    CHECK_STR(quoted_cell("\"", out), "\"\"\"\"");
    CHECK_STR(quoted_cell("a=b", out), "\"a=b\"");
}

int main(void)
{
    RUN(test_csv_cells_are_quoted_only_when_needed);
    RUN(test_csv_formula_cells_are_guarded);
    RUN(test_csv_numbers_and_header);
    RUN(test_csv_always_quoted_cells_are_never_formulas);
    RUN(test_accept_chooses_csv_only_when_preferred);
    return TEST_EXIT();
}
