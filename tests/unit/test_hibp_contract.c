/* The store contract of what the Have I Been Pwned API v3 reads (store.h): each breach's
 * Name, times and flags, a breach by Name, the breaches of one email, the (email, breach)
 * pairs of one domain. Each test runs on a SQLite store and, when BREACHD_TEST_PG_URI names
 * a server, on a PostgreSQL store (store_fixture.h), through store.h alone. */
#include <time.h>

#include "record_fixture.h"

/* Appends "name/added/modified/flags" of each breach; "-" for the times of a put without
 * them when they are the put's own time. */
static int take_hibp(void *ctx, const bd_breach_row *b)
{
    int64_t now = (int64_t)time(NULL);
    size_t n = strlen(text);
    bool recent = b->added_at > now - 60 && b->added_at <= now && b->modified_at == b->added_at;
    if (recent || ctx)
        snprintf(text + n, sizeof text - n, "%s%.*s/-/%u", n ? "," : "", (int)b->name.len,
                 b->name.ptr, (unsigned)b->flags);
    else
        snprintf(text + n, sizeof text - n, "%s%.*s/%lld/%lld/%u", n ? "," : "",
                 (int)b->name.len, b->name.ptr, (long long)b->added_at,
                 (long long)b->modified_at, (unsigned)b->flags);
    return 0;
}

static void put_named(bd_store *s, const char *uuid, const char *source, const char *name)
{
    bd_breach_in b = {.source_name = bd_slice_from(source),
                      .name = bd_slice_from(name),
                      .date_leaked = 20200101,
                      .pwned_count = -1};
    memcpy(b.uuid, uuid, BD_UUID_LEN + 1);
    bool ins = false;
    CHECK_INT(bd_store_breach_put(s, &b, &ins), BD_OK);
    CHECK(ins);
}

static const char *by_name(bd_store *s, const char *name)
{
    text[0] = '\0';
    bd_result r = bd_store_breach_by_name(s, bd_slice_from(name), take_hibp, NULL);
    return r == BD_ERR_NOT_FOUND ? "not found" : r == BD_OK ? text : "error";
}

TEST(test_breach_put_derives_a_unique_name_once)
{
    bd_store *s = fresh();
    put_named(s, OLD, "Alpha Forum", NULL);
    put_named(s, MID, "alpha.forum", NULL);  /* the same base: numbered */
    put_named(s, NEW, "Gamma", "ALPHAFORUM"); /* asked for, taken regardless of case */
    put_named(s, ABSENT, "Delta", "not valid!"); /* not a Name: derived instead */
    text[0] = '\0';
    CHECK_INT(bd_store_breach_list(s, 0, take_hibp, NULL), BD_OK);
    /* listed by source name: "Alpha Forum", "Delta", "Gamma", "alpha.forum" */
    CHECK_STR(text, "AlphaForum/-/0,Delta/-/0,ALPHAFORUM3/-/0,AlphaForum2/-/0");
    /* a second put of a uuid changes nothing, its Name included */
    bd_breach_in again = {.uuid = OLD, .source_name = BD_SLICE_LIT("Zeta"), .pwned_count = -1};
    bool ins = true;
    CHECK_INT(bd_store_breach_put(s, &again, &ins), BD_OK);
    CHECK(!ins);
    CHECK_STR(by_name(s, "AlphaForum"), "AlphaForum/-/0");
    CHECK_STR(by_name(s, "Zeta"), "not found");
}

TEST(test_breach_put_keeps_the_times_and_flags_it_is_given)
{
    bd_store *s = fresh();
    bd_breach_in b = {.uuid = OLD,
                      .source_name = BD_SLICE_LIT("Old"),
                      .date_leaked = 20100101,
                      .pwned_count = 5,
                      .added_at = 1556668800, /* 2019-05-01 */
                      .modified_at = 1560000000,
                      .flags = BD_BREACH_UNVERIFIED | BD_BREACH_SPAM_LIST |
                               BD_BREACH_SUBSCRIPTION_FREE};
    bool ins;
    CHECK_INT(bd_store_breach_put(s, &b, &ins), BD_OK);
    bd_breach_in only_added = {.uuid = NEW,
                               .source_name = BD_SLICE_LIT("New"),
                               .date_leaked = 20200101,
                               .pwned_count = -1,
                               .added_at = 1600000000};
    CHECK_INT(bd_store_breach_put(s, &only_added, &ins), BD_OK);
    CHECK_STR(by_name(s, "Old"), "Old/1556668800/1560000000/145");
    CHECK_STR(by_name(s, "New"), "New/1600000000/1600000000/0");
}

TEST(test_breach_by_name_ignores_case_and_reports_a_missing_name)
{
    bd_store *s = fresh();
    breaches(s);
    CHECK_STR(by_name(s, "mid"), "Mid/-/0");
    CHECK_STR(by_name(s, "MID"), "Mid/-/0");
    CHECK_STR(by_name(s, "Mi"), "not found");
    CHECK_STR(by_name(s, ""), "not found");
    CHECK_STR(by_name(s, "Mid' OR '1'='1"), "not found");
}

static const char *of_email(bd_store *s, const char *email)
{
    text[0] = '\0';
    CHECK_INT(bd_store_breaches_of_email(s, bd_slice_from(email), take_hibp, NULL), BD_OK);
    return text;
}

TEST(test_breaches_of_email_lists_each_breach_once_by_name)
{
    bd_store *s = fresh();
    breaches(s);
    put_email(s, OLD, "ann@a.example", 1);
    put_email(s, OLD, "ann@a.example", 2); /* a second record in the same breach */
    put_email(s, NEW, "ann@a.example", 3);
    put_email(s, MID, "bob@a.example", 4);
    CHECK_STR(of_email(s, "ann@a.example"), "New/-/0,Old/-/0");
    CHECK_STR(of_email(s, "bob@a.example"), "Mid/-/0");
    CHECK_STR(of_email(s, "Ann@a.example"), ""); /* emails arrive normalised */
    CHECK_STR(of_email(s, "nobody@a.example"), "");
}

static int take_pair(void *ctx, const bd_domain_row *row)
{
    (void)ctx;
    size_t n = strlen(text);
    snprintf(text + n, sizeof text - n, "%s%.*s>%.*s", n ? "," : "", (int)row->email.len,
             row->email.ptr, (int)row->breach_name.len, row->breach_name.ptr);
    return 0;
}

static const char *pairs(bd_store *s, const char *domain, int64_t max, bd_result want)
{
    static char out[1024];
    int64_t records = -1;
    text[0] = '\0';
    CHECK_INT(bd_store_read_begin(s), BD_OK);
    CHECK_INT(bd_store_domain_breaches(s, bd_slice_from(domain), max, take_pair, NULL, &records),
              want);
    bd_store_read_end(s);
    snprintf(out, sizeof out, "%s /%lld", text, (long long)records);
    return out;
}

TEST(test_domain_breaches_pairs_each_email_with_each_breach_once)
{
    bd_store *s = fresh();
    breaches(s);
    put_email(s, OLD, "bob@a.example", 1);
    put_email(s, NEW, "ann@a.example", 2);
    put_email(s, OLD, "ann@a.example", 3);
    put_email(s, OLD, "ann@a.example", 4); /* the same pair again */
    put_email(s, MID, "cy@b.example", 5);
    bd_record_in no_email = record(MID, NULL, 6);
    no_email.email_domain = BD_SLICE_LIT("a.example");
    CHECK(put(s, &no_email));
    CHECK_STR(pairs(s, "a.example", 100, BD_OK),
              "ann@a.example>New,ann@a.example>Old,bob@a.example>Old /5");
    CHECK_STR(pairs(s, "b.example", 1, BD_OK), "cy@b.example>Mid /1");
    CHECK_STR(pairs(s, "c.example", 100, BD_OK), " /0");
}

TEST(test_domain_breaches_refuses_a_domain_over_the_maximum_before_reading_it)
{
    bd_store *s = fresh();
    breaches(s);
    for (int i = 0; i < 5; i++) {
        char email[32];
        snprintf(email, sizeof email, "u%d@a.example", i);
        put_email(s, OLD, email, i);
    }
    CHECK_STR(pairs(s, "a.example", 4, BD_ERR_LIMIT), " /5");
    CHECK_STR(pairs(s, "a.example", 5, BD_OK),
              "u0@a.example>Old,u1@a.example>Old,u2@a.example>Old,u3@a.example>Old,"
              "u4@a.example>Old /5");
}

static void suite(void)
{
    RUN_CONTRACT(test_breach_put_derives_a_unique_name_once);
    RUN_CONTRACT(test_breach_put_keeps_the_times_and_flags_it_is_given);
    RUN_CONTRACT(test_breach_by_name_ignores_case_and_reports_a_missing_name);
    RUN_CONTRACT(test_breaches_of_email_lists_each_breach_once_by_name);
    RUN_CONTRACT(test_domain_breaches_pairs_each_email_with_each_breach_once);
    RUN_CONTRACT(test_domain_breaches_refuses_a_domain_over_the_maximum_before_reading_it);
}

int main(void)
{
    return fx_main(suite);
}
