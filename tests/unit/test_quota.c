/* Monthly quotas: breachctl's --quota text (auth/keys.h) and the UTC days and month ends the
 * counters and the reset date use (auth/usage.h). */
#include "auth/keys.h"
#include "auth/usage.h"
#include "test.h"

static int64_t parsed(const char *s)
{
    int64_t v = -7;
    return bd_quota_parse(s, &v) ? v : -1;
}

TEST(test_quota_parse_takes_n_per_month)
{
    CHECK_INT(parsed("5/month"), 5);
    CHECK_INT(parsed("1/month"), 1);
    CHECK_INT(parsed("10000"), 10000);
    CHECK_INT(parsed("1000000000000/month"), 1000000000000LL);
    CHECK_INT(parsed("007/month"), 7);
}

TEST(test_quota_parse_refuses_anything_else)
{
    static const char *const bad[] = {"0/month", "0", "abc", "5/week", "5/Month", "5/month ",
                                      " 5/month", "-5/month", "+5/month", "5/", "/month", "",
                                      "1000000000001/month", "99999999999999999999/month",
                                      "5/monthly", "5//month", "5.0/month", "0x10/month"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (parsed(bad[i]) != -1)
            TEST_FAIL("'%s' was taken", bad[i]);
    }
    int64_t v = -7;
    CHECK(!bd_quota_parse(NULL, &v));
    CHECK_INT(v, -7); /* untouched when refused */
}

TEST(test_usage_day_is_the_utc_date)
{
    CHECK_INT(bd_usage_day(0), 19700101);
    CHECK_INT(bd_usage_day(1795478400), 20261124);     /* 2026-11-24T00:00:00Z */
    CHECK_INT(bd_usage_day(1795478400 - 1), 20261123); /* one second before */
    CHECK_INT(bd_usage_day(1709164800), 20240229);     /* a leap day */
}

TEST(test_month_end_is_the_first_second_of_the_next_utc_month)
{
    CHECK_INT(bd_usage_month_end(1795478400), 1796083200);  /* 2026-11-24 -> 2026-12-01 */
    CHECK_INT(bd_usage_month_end(1796083200 - 1), 1796083200); /* the month's last second */
    CHECK_INT(bd_usage_month_end(1796083200), 1798761600);  /* 2026-12-01 -> 2027-01-01 */
    CHECK_INT(bd_usage_month_end(1798761599), 1798761600);  /* New Year's Eve, 23:59:59 */
    CHECK_INT(bd_usage_month_end(1706745600), 1709251200);  /* 2024-02-01 -> 2024-03-01 */
    CHECK_INT(bd_usage_month_end(1709164800), 1709251200);  /* the leap day */
    CHECK_INT(bd_usage_month_end(0), 2678400);              /* 1970-02-01 */
}

int main(void)
{
    RUN(test_quota_parse_takes_n_per_month);
    RUN(test_quota_parse_refuses_anything_else);
    RUN(test_usage_day_is_the_utc_date);
    RUN(test_month_end_is_the_first_second_of_the_next_utc_month);
    return TEST_EXIT();
}
