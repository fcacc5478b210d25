/* Tests for CSV record boundaries, header parsing and row parsing (RFC 4180). */
#include "ingest/csv.h"

#include "test.h"

static bd_csv_header *h;
static bd_fields *f;
static char why[256];

static bd_result header(const char *rec)
{
    why[0] = '\0';
    return bd_csv_parse_header(rec, strlen(rec), h, why, sizeof why);
}

static bd_result row(const char *rec)
{
    why[0] = '\0';
    return bd_csv_parse_row(h, rec, strlen(rec), f, why, sizeof why);
}

static const char *get(const char *name)
{
    bd_slice v;
    if (!bd_fields_get(f, name, &v))
        return "(absent)";
    return v.len == strlen(v.ptr) ? v.ptr : "(embedded NUL)";
}

static bool complete(const char *rec)
{
    return bd_csv_record_complete(rec, strlen(rec));
}

TEST(test_record_without_quotes_is_complete)
{
    CHECK(complete("a,b,c"));
    CHECK(complete(""));
}

TEST(test_record_with_open_quote_is_incomplete)
{
    CHECK(!complete("a,\"b"));
    CHECK(!complete("a,\"b\nc"));
    CHECK(!complete("\"x\"\"")); /* the "" is an escaped quote; still open */
}

TEST(test_record_with_closed_quote_is_complete)
{
    CHECK(complete("a,\"b\nc\""));
    CHECK(complete("\"x\"\"\"")); /* x" */
    CHECK(complete("\"\""));
}

TEST(test_quote_inside_unquoted_cell_does_not_open_a_quote)
{
    CHECK(complete("a,b\"c,d"));
}

TEST(test_text_after_closing_quote_counts_as_complete)
{
    CHECK(complete("\"a\"b\"c"));
}

TEST(test_scan_feeds_lines_incrementally)
{
    bd_csv_scan s;
    bd_csv_scan_init(&s);
    CHECK(!bd_csv_scan_feed(&s, "1,\"multi", 8));
    CHECK(!bd_csv_scan_feed(&s, "\n", 1));
    CHECK(!bd_csv_scan_feed(&s, "line \"\"quoted", 13));
    CHECK(bd_csv_scan_feed(&s, "\"", 1));  /* closes the cell, unless a quote follows */
    CHECK(!bd_csv_scan_feed(&s, "\"", 1)); /* it did: the pair was an escaped quote */
    CHECK(bd_csv_scan_feed(&s, "\",x", 3));
}

TEST(test_header_gives_column_names_in_order)
{
    CHECK_INT(header("email,password,user_name"), BD_OK);
    CHECK_INT(bd_csv_header_count(h), 3);
    CHECK_STR(bd_csv_header_name(h, 0), "email");
    CHECK_STR(bd_csv_header_name(h, 1), "password");
    CHECK_STR(bd_csv_header_name(h, 2), "user_name");
}

TEST(test_header_strips_a_utf8_bom)
{
    CHECK_INT(header("\xEF\xBB\xBF"
                     "email,password"),
              BD_OK);
    CHECK_STR(bd_csv_header_name(h, 0), "email");
}

TEST(test_header_names_may_be_quoted)
{
    CHECK_INT(header("\"email\",\"odd,\"\"name\"\"\"\r"), BD_OK);
    CHECK_INT(bd_csv_header_count(h), 2);
    CHECK_STR(bd_csv_header_name(h, 0), "email");
    CHECK_STR(bd_csv_header_name(h, 1), "odd,\"name\"");
}

TEST(test_header_duplicate_name_is_invalid)
{
    CHECK_INT(header("email,password,email"), BD_ERR_INVALID);
    CHECK_STR(why, "columns 1 and 3 of the header have the same name");
    CHECK_INT(bd_csv_header_count(h), 0);
    /* a headerless file's first row stands as its header: the repeated cell may be a
     * password, so the message names the columns by position only */
    CHECK_INT(header("ann@example.com,Pa55word!,x,y,Pa55word!"), BD_ERR_INVALID);
    CHECK_STR(why, "columns 2 and 5 of the header have the same name");
    CHECK(strstr(why, "Pa55word") == NULL);
}

TEST(test_header_empty_name_is_invalid)
{
    CHECK_INT(header("email,,password"), BD_ERR_INVALID);
    CHECK_STR(why, "column 2 of the header has no name");
    CHECK_INT(header("email,password,"), BD_ERR_INVALID);
    CHECK_STR(why, "column 3 of the header has no name");
    CHECK_INT(header("email,\"\""), BD_ERR_INVALID);
    CHECK_STR(why, "column 2 of the header has no name");
}

TEST(test_header_name_with_nul_is_invalid)
{
    CHECK_INT(bd_csv_parse_header("a,b\0c", 5, h, why, sizeof why), BD_ERR_INVALID);
    CHECK_STR(why, "column 2 of the header has a NUL byte in its name");
}

TEST(test_header_with_more_than_64_columns_is_invalid)
{
    char rec[1024];
    size_t n = 0;
    for (int i = 0; i < 65; i++)
        n += (size_t)snprintf(rec + n, sizeof rec - n, "%sc%d", i ? "," : "", i);
    CHECK_INT(header(rec), BD_ERR_INVALID);
    CHECK_STR(why, "the header has more than 64 columns");
}

TEST(test_row_cells_are_named_after_the_header)
{
    CHECK_INT(header("email,password"), BD_OK);
    CHECK_INT(row("a@example.com,hunter2"), BD_OK);
    CHECK_INT(bd_fields_count(f), 2);
    CHECK_STR(bd_fields_name(f, 1), "password");
    CHECK_STR(get("email"), "a@example.com");
    CHECK_STR(get("password"), "hunter2");
}

TEST(test_row_quoted_cell_may_hold_commas)
{
    CHECK_INT(header("name,city"), BD_OK);
    CHECK_INT(row("\"Doe, John\",Paris"), BD_OK);
    CHECK_STR(get("name"), "Doe, John");
    CHECK_STR(get("city"), "Paris");
}

TEST(test_row_doubled_quotes_become_one)
{
    CHECK_INT(header("a,b"), BD_OK);
    CHECK_INT(row("\"say \"\"hi\"\"\",\"\"\"\"\"\""), BD_OK);
    CHECK_STR(get("a"), "say \"hi\"");
    CHECK_STR(get("b"), "\"\"");
}

TEST(test_row_quoted_cell_may_hold_line_breaks)
{
    CHECK_INT(header("id,note"), BD_OK);
    CHECK_INT(row("1,\"line one\nline two\r\nline three\""), BD_OK);
    CHECK_STR(get("note"), "line one\nline two\r\nline three");
}

TEST(test_row_trailing_cr_is_dropped)
{
    CHECK_INT(header("a,b"), BD_OK);
    CHECK_INT(row("1,2\r"), BD_OK);
    CHECK_STR(get("b"), "2");
    CHECK_INT(row("1,\"2\"\r"), BD_OK);
    CHECK_STR(get("b"), "2");
}

TEST(test_row_empty_unquoted_cell_is_absent)
{
    CHECK_INT(header("a,b,c"), BD_OK);
    CHECK_INT(row(",x,"), BD_OK);
    CHECK_INT(bd_fields_count(f), 3);
    CHECK_STR(get("a"), "(absent)");
    CHECK_STR(get("b"), "x");
    CHECK_STR(get("c"), "(absent)");
}

TEST(test_row_quoted_empty_cell_is_present_and_empty)
{
    CHECK_INT(header("a,b"), BD_OK);
    CHECK_INT(row("\"\",x"), BD_OK);
    bd_slice v = {NULL, 9};
    CHECK(bd_fields_get(f, "a", &v));
    CHECK_INT(v.len, 0);
}

TEST(test_row_cells_keep_spaces)
{
    CHECK_INT(header("a,b"), BD_OK);
    CHECK_INT(row(" x ,y "), BD_OK);
    CHECK_STR(get("a"), " x ");
    CHECK_STR(get("b"), "y ");
}

TEST(test_row_quote_after_a_space_is_literal)
{
    CHECK_INT(header("a,b"), BD_OK);
    CHECK_INT(row("x, \"y\" "), BD_OK);
    CHECK_STR(get("b"), " \"y\" ");
}

TEST(test_row_quote_inside_unquoted_cell_is_literal)
{
    CHECK_INT(header("name"), BD_OK);
    CHECK_INT(row("John \"JJ\" Smith"), BD_OK);
    CHECK_STR(get("name"), "John \"JJ\" Smith");
}

TEST(test_row_text_after_closing_quote_is_invalid)
{
    CHECK_INT(header("a,b"), BD_OK);
    CHECK_INT(row("\"x\"y,z"), BD_ERR_INVALID);
    CHECK_STR(why, "the record is not valid CSV: a closing quote must be followed by a comma "
                   "or the end of the record");
    CHECK_INT(bd_fields_count(f), 0);
}

TEST(test_row_unclosed_quote_is_invalid)
{
    CHECK_INT(header("a,b"), BD_OK);
    CHECK_INT(row("x,\"y"), BD_ERR_INVALID);
    CHECK_STR(why, "the record is not valid CSV: a quoted cell is not closed");
}

TEST(test_row_with_too_few_cells_is_invalid)
{
    CHECK_INT(header("a,b,c"), BD_OK);
    CHECK_INT(row("1,2"), BD_ERR_INVALID);
    CHECK_STR(why, "the record has 2 cells but the header has 3 columns");
    CHECK_INT(bd_fields_count(f), 0);
}

TEST(test_row_with_too_many_cells_is_invalid)
{
    CHECK_INT(header("a,b"), BD_OK);
    CHECK_INT(row("1,2,3,\"4,5\""), BD_ERR_INVALID);
    CHECK_STR(why, "the record has 4 cells but the header has 2 columns");
}

TEST(test_row_keeps_nul_bytes_in_values)
{
    CHECK_INT(header("p"), BD_OK);
    CHECK_INT(bd_csv_parse_row(h, "a\0b", 3, f, why, sizeof why), BD_OK);
    bd_slice v;
    CHECK(bd_fields_get(f, "p", &v));
    CHECK_INT(v.len, 3);
    CHECK(memcmp(v.ptr, "a\0b", 3) == 0);
}

TEST(test_row_with_one_column_and_empty_record_is_absent_value)
{
    CHECK_INT(header("a"), BD_OK);
    CHECK_INT(row(""), BD_OK);
    CHECK_INT(bd_fields_count(f), 1);
    CHECK_STR(get("a"), "(absent)");
}

/* Regression (found by fuzz_csv): the boundary scanner and the row parser must agree on a
 * line break outside quotes followed by a quote. The scanner once saw a new record there and
 * called the text incomplete while the parser accepted it as one cell. */
TEST(test_scanner_and_parser_agree_on_bare_line_break_then_quote)
{
    CHECK_INT(header("note"), BD_OK);
    CHECK(complete("a\n\"b"));
    CHECK_INT(row("a\n\"b"), BD_OK);
    CHECK_STR(get("note"), "a\n\"b");
}

static bool well_formed(const char *rec)
{
    return bd_csv_record_well_formed(rec, strlen(rec));
}

TEST(test_well_formed_records_whatever_their_cell_count)
{
    CHECK(well_formed("a,b,c"));
    CHECK(well_formed(""));
    CHECK(well_formed("\"x, y\",\"\"\"q\"\"\",z"));
    CHECK(well_formed("1,\"multi\nline\"\r"));
    CHECK(well_formed("John \"JJ\" Smith,5'11\""));
    CHECK(well_formed("1,2,3,4,5,6,7"));
}

TEST(test_text_after_a_closing_quote_or_an_open_quote_is_not_well_formed)
{
    CHECK(!well_formed("1,\"stray\n2,x\n3,\"y"));
    CHECK(!well_formed("\"a\"b,c"));
    CHECK(!well_formed("a,\"open"));
    CHECK(!well_formed("\"x\" "));
}

int main(void)
{
    h = bd_csv_header_new();
    f = bd_fields_new();
    if (!h || !f)
        return 1;
    RUN(test_record_without_quotes_is_complete);
    RUN(test_record_with_open_quote_is_incomplete);
    RUN(test_record_with_closed_quote_is_complete);
    RUN(test_quote_inside_unquoted_cell_does_not_open_a_quote);
    RUN(test_text_after_closing_quote_counts_as_complete);
    RUN(test_scan_feeds_lines_incrementally);
    RUN(test_header_gives_column_names_in_order);
    RUN(test_header_strips_a_utf8_bom);
    RUN(test_header_names_may_be_quoted);
    RUN(test_header_duplicate_name_is_invalid);
    RUN(test_header_empty_name_is_invalid);
    RUN(test_header_name_with_nul_is_invalid);
    RUN(test_header_with_more_than_64_columns_is_invalid);
    RUN(test_row_cells_are_named_after_the_header);
    RUN(test_row_quoted_cell_may_hold_commas);
    RUN(test_row_doubled_quotes_become_one);
    RUN(test_row_quoted_cell_may_hold_line_breaks);
    RUN(test_row_trailing_cr_is_dropped);
    RUN(test_row_empty_unquoted_cell_is_absent);
    RUN(test_row_quoted_empty_cell_is_present_and_empty);
    RUN(test_row_cells_keep_spaces);
    RUN(test_row_quote_after_a_space_is_literal);
    RUN(test_row_quote_inside_unquoted_cell_is_literal);
    RUN(test_row_text_after_closing_quote_is_invalid);
    RUN(test_row_unclosed_quote_is_invalid);
    RUN(test_row_with_too_few_cells_is_invalid);
    RUN(test_row_with_too_many_cells_is_invalid);
    RUN(test_row_keeps_nul_bytes_in_values);
    RUN(test_row_with_one_column_and_empty_record_is_absent_value);
    RUN(test_scanner_and_parser_agree_on_bare_line_break_then_quote);
    RUN(test_well_formed_records_whatever_their_cell_count);
    RUN(test_text_after_a_closing_quote_or_an_open_quote_is_not_well_formed);
    bd_fields_free(f);
    bd_csv_header_free(h);
    return TEST_EXIT();
}
