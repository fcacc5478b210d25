/* Date parsing and formatting. */
#include "core/date.h"
#include "test.h"

static const char *dmy(const char *iso)
{
    static char out[12];
    return bd_date_iso_to_dmy(bd_slice_from(iso), out) ? out : NULL;
}

TEST(test_date_iso_to_dmy_uses_two_digit_day_and_english_month)
{
    CHECK_STR(dmy("2013-10-04"), "04-Oct-2013");
    CHECK_STR(dmy("2024-02-29"), "29-Feb-2024");
    CHECK_STR(dmy("2023-02-29"), NULL);
    CHECK_STR(dmy("2023-04-31"), NULL);
    CHECK_STR(dmy("2023-4-01"), NULL);
    CHECK_STR(dmy("1899-12-31"), NULL);
}

TEST(test_date_dmy_parses_any_month_case)
{
    bd_datetime t;
    CHECK(bd_date_parse_dmy(bd_slice_from("04-oct-2013"), &t));
    CHECK_INT(t.y * 10000 + t.m * 100 + t.d, 20131004);
    CHECK(!bd_date_parse_dmy(bd_slice_from("4-Oct-2013"), &t));
    CHECK(!bd_date_parse_dmy(bd_slice_from("31-Sep-2013"), &t));
    CHECK(!bd_date_parse_dmy(bd_slice_from("01-Foo-2013"), &t));
}

TEST(test_datetime_accepts_space_or_t_and_checks_clock)
{
    bd_datetime t;
    char out[20];
    CHECK(bd_datetime_parse(bd_slice_from("2021-03-04T05:06:07"), &t));
    bd_datetime_format(&t, out);
    CHECK_STR(out, "2021-03-04 05:06:07");
    CHECK(!bd_datetime_parse(bd_slice_from("2021-03-04 24:00:00"), &t));
    CHECK(!bd_datetime_parse(bd_slice_from("2021-03-04 23:60:00"), &t));
    CHECK(!bd_datetime_parse(bd_slice_from("2021-03-04"), &t));
}

int main(void)
{
    RUN(test_date_iso_to_dmy_uses_two_digit_day_and_english_month);
    RUN(test_date_dmy_parses_any_month_case);
    RUN(test_datetime_accepts_space_or_t_and_checks_clock);
    return TEST_EXIT();
}
