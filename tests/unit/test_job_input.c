/* A bulk job's body (http/job_input.h) in its three formats: exact identities handed on,
 * refusals, the cap. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http/job_input.h"
#include "test.h"

/* The identities handed on, joined by '|'. */
typedef struct {
    char got[512];
    size_t n;
} seen;

static int take(void *ctx, size_t index, bd_slice v)
{
    seen *s = ctx;
    size_t at = strlen(s->got);
    snprintf(s->got + at, sizeof s->got - at, "%s%.*s", index ? "|" : "", (int)v.len, v.ptr);
    s->n++;
    return 0;
}

static bd_result read_as(bd_job_input_format f, const char *body, const char *type, seen *s,
                         char *type_out, char *why)
{
    memset(s, 0, sizeof *s);
    size_t count = 0;
    bd_slice t = type ? (bd_slice){type, strlen(type)} : (bd_slice){NULL, 0};
    bd_result r = bd_job_input_read((bd_slice){body, strlen(body)}, f, t, type_out, take, s,
                                    &count, why, 200);
    CHECK_INT((long)count, (long)s->n);
    return r;
}

TEST(test_job_input_json_hands_on_accounts_in_order)
{
    seen s;
    char type[BD_JOB_TYPE_MAX], why[200];
    CHECK_INT(read_as(BD_JOB_INPUT_JSON, "{\"type\":\"email\",\"accounts\":[\"a@b.c\",\"\\u00e9@x.y\"]}",
                      NULL, &s, type, why), BD_OK);
    CHECK_STR(s.got, "a@b.c|\xc3\xa9@x.y");
    CHECK_STR(type, "email");
    CHECK_INT(read_as(BD_JOB_INPUT_JSON, "{\"accounts\":[\"a@b.c\"]}", "phonenumber", &s, type, why),
              BD_OK);
    CHECK_STR(type, "phonenumber");
}

TEST(test_job_input_json_refuses_other_shapes_and_disagreeing_types)
{
    seen s;
    char type[BD_JOB_TYPE_MAX], why[200];
    const char *bad[] = {"[]", "{\"accounts\":[1]}", "{\"type\":\"email\"}",
                         "{\"type\":\"email\",\"accounts\":[],\"x\":1}", "{\"type\":7,\"accounts\":[]}",
                         "{\"type\":\"email\",\"type\":\"email\",\"accounts\":[]}", "{"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK_INT(read_as(BD_JOB_INPUT_JSON, bad[i], "email", &s, type, why), BD_ERR_INVALID);
        CHECK(why[0] != '\0');
    }
    CHECK_INT(read_as(BD_JOB_INPUT_JSON, "{\"type\":\"email\",\"accounts\":[]}", "username", &s,
                      type, why),
              BD_ERR_INVALID);
    CHECK(strstr(why, "differ") != NULL);
    CHECK_INT(read_as(BD_JOB_INPUT_JSON, "{\"accounts\":[\"a\"]}", NULL, &s, type, why),
              BD_ERR_INVALID);
}

TEST(test_job_input_text_skips_empty_lines_and_crs)
{
    seen s;
    char type[BD_JOB_TYPE_MAX], why[200];
    CHECK_INT(read_as(BD_JOB_INPUT_TEXT, "a@b.c\r\n\r\n\nd@e.f\n g@h.i \r", "email", &s, type, why),
              BD_OK);
    CHECK_STR(s.got, "a@b.c|d@e.f| g@h.i ");
    CHECK_INT(read_as(BD_JOB_INPUT_TEXT, "a@b.c\n", NULL, &s, type, why), BD_ERR_INVALID);
}

TEST(test_job_input_csv_takes_first_cells_and_skips_a_header)
{
    seen s;
    char type[BD_JOB_TYPE_MAX], why[200];
    CHECK_INT(read_as(BD_JOB_INPUT_CSV,
                      "\xEF\xBB\xBF" "Email,note\r\n\"a,\"\"b\"\"@c.d\",\"x\ny\"\r\ne@f.g\n\n,z\nlast",
                      "email", &s, type, why),
              BD_OK);
    CHECK_STR(s.got, "a,\"b\"@c.d|e@f.g|last");
    CHECK_INT(read_as(BD_JOB_INPUT_CSV, "account\naccount\n", "email", &s, type, why), BD_OK);
    CHECK_STR(s.got, "account"); /* only the first record can be a header */
    CHECK_INT(read_as(BD_JOB_INPUT_CSV, "a@b.c\n\"open", "email", &s, type, why), BD_ERR_INVALID);
    CHECK(strstr(why, "record 2") != NULL);
    CHECK_INT(read_as(BD_JOB_INPUT_CSV, "\"a\"b\n", "email", &s, type, why), BD_ERR_INVALID);
}

static int count_only(void *ctx, size_t index, bd_slice v)
{
    (void)index;
    (void)v;
    (*(size_t *)ctx)++;
    return 0;
}

TEST(test_job_input_stops_past_the_maximum)
{
    size_t n = BD_JOB_MAX_IDENTITIES + 1, calls = 0, count = 0;
    char *body = malloc(n * 2);
    CHECK(body != NULL);
    for (size_t i = 0; i < n; i++)
        memcpy(body + 2 * i, "x\n", 2);
    char type[BD_JOB_TYPE_MAX], why[200];
    bd_result r = bd_job_input_read((bd_slice){body, n * 2}, BD_JOB_INPUT_TEXT,
                                    (bd_slice){"email", 5}, type, count_only, &calls, &count, why,
                                    sizeof why);
    CHECK_INT(r, BD_ERR_LIMIT);
    CHECK_INT((long)count, BD_JOB_MAX_IDENTITIES);
    CHECK_INT((long)calls, BD_JOB_MAX_IDENTITIES);
    r = bd_job_input_read((bd_slice){body, (n - 1) * 2}, BD_JOB_INPUT_TEXT,
                          (bd_slice){"email", 5}, type, count_only, &calls, &count, why, sizeof why);
    CHECK_INT(r, BD_OK);
    free(body);
}

TEST(test_job_input_formats_by_content_type)
{
    bd_job_input_format f;
    CHECK(bd_job_input_format_of("application/json; charset=utf-8", &f) && f == BD_JOB_INPUT_JSON);
    CHECK(bd_job_input_format_of("Text/CSV", &f) && f == BD_JOB_INPUT_CSV);
    CHECK(bd_job_input_format_of("text/plain;charset=utf-8", &f) && f == BD_JOB_INPUT_TEXT);
    CHECK(!bd_job_input_format_of("text/plainer", &f));
    CHECK(!bd_job_input_format_of(NULL, &f));
}

int main(void)
{
    RUN(test_job_input_json_hands_on_accounts_in_order);
    RUN(test_job_input_json_refuses_other_shapes_and_disagreeing_types);
    RUN(test_job_input_text_skips_empty_lines_and_crs);
    RUN(test_job_input_csv_takes_first_cells_and_skips_a_header);
    RUN(test_job_input_stops_past_the_maximum);
    RUN(test_job_input_formats_by_content_type);
    return TEST_EXIT();
}
