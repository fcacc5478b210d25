/* A bulk job's body (v7/job_input.h) in its three formats: exact identities handed on,
 * refusals, the cap. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "v7/job_input.h"
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

/* A refusal of a malformed JSON body says where (line and column), never what it found
 * there: the text near a fault is someone's identity, maybe a password. */
TEST(test_job_input_json_errors_give_positions_not_values)
{
    seen s;
    char type[BD_JOB_TYPE_MAX], why[200];
    const struct {
        const char *body, *secret, *where;
    } bad[] = {
        {"{\"type\":\"password\",\"accounts\":[\"FirstPassw0rd\" \"SecondPassw0rd\"]}",
         "Passw0rd", "line 1, column 48"},
        {"{\"type\":\"password\",\n\"accounts\":[\"Hunter2Secret\n\"]}", "Hunter2", "line 2, column 27"},
        {"{\"type\":\"password\",\"accounts\":[\"ab\\qSecretWord\"]}", "SecretWord", "line 1, column 35"},
        {"{\"type\":\"password\",\"accounts\":[\"Open\xff" "Secret\"]}", "Secret", "line 1, column 37"},
        {"{\"type\":\"password\",\"accounts\":[\"OpenSecret", "OpenSecret", "line 1, column 32"},
        {"{\"type\":\"password\",\"accounts\":[\"a\"]} TrailingSecret", "TrailingSecret",
         "line 1, column 38"},
        {"{\"type\":\"password\",\"accounts\":[tru]}", "tru", "line 1, column 32"},
        {"{\"type\":\"password\",\"accounts\":[\"a\\u0000SecretNul\"]}", "SecretNul", "line 1, column 34"},
        {"{\"type\":\"password\",\"SecretName\":[]}", "SecretName", "column"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK_INT(read_as(BD_JOB_INPUT_JSON, bad[i].body, NULL, &s, type, why), BD_ERR_INVALID);
        if (!strstr(why, bad[i].where) || strstr(why, bad[i].secret) || strstr(why, "near"))
            TEST_FAIL("body %zu: %s", i, why);
    }
}

/* Member order, escaped member names and whitespace are JSON's business, not the reader's. */
TEST(test_job_input_json_takes_any_member_order)
{
    seen s;
    char type[BD_JOB_TYPE_MAX], why[200];
    CHECK_INT(read_as(BD_JOB_INPUT_JSON,
                      " \r\n{ \"accounts\" : [ \"a@b.c\" ,\t\"d\\\"e\\\\f\\/\\n\\ud83d\\ude00\" ] ,"
                      " \"t\\u0079pe\" : \"email\" } \n",
                      NULL, &s, type, why),
              BD_OK);
    CHECK_STR(s.got, "a@b.c|d\"e\\f/\n\xf0\x9f\x98\x80");
    CHECK_STR(type, "email");
    const char *bad[] = {"{\"type\":\"email\",\"accounts\":[\"a\"],\"accounts\":[\"b\"]}",
                         "{\"type\":\"email\",\"accounts\":[\"a\",]}",
                         "{\"type\":\"email\",\"accounts\":[\"\\ud83d\"]}",
                         "{\"type\":\"email\",\"accounts\":[[[[[[\"a\"]]]]]]}",
                         "{\"type\":\"email\",\"accounts\":[\"a\"],}", "", "  "};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK_INT(read_as(BD_JOB_INPUT_JSON, bad[i], NULL, &s, type, why), BD_ERR_INVALID);
        CHECK(why[0] != '\0');
        CHECK_INT((long)s.n, 0);
    }
    CHECK_INT(read_as(BD_JOB_INPUT_JSON, "{\"type\":\"email\",\"accounts\":[\"a\",{}]}", NULL, &s,
                      type, why),
              BD_ERR_INVALID);
    CHECK_STR(why, "accounts[1] is not a string");
}

/* A body of more identities than a job takes is refused before any is handed on (or
 * checked), however small each is: nothing is built for them. */
TEST(test_job_input_json_counts_before_handing_on)
{
    size_t n = BD_JOB_MAX_IDENTITIES + 1, calls = 0, count = 0;
    char *body = malloc(n * 3 + 64);
    CHECK(body != NULL);
    size_t at = (size_t)snprintf(body, 64, "{\"type\":\"email\",\"accounts\":[");
    for (size_t i = 0; i < n; i++) {
        memcpy(body + at, i ? ",\"\"" : "\"\"", i ? 3 : 2);
        at += i ? 3 : 2;
    }
    memcpy(body + at, "]}", 2);
    at += 2;
    char type[BD_JOB_TYPE_MAX], why[200];
    bd_result r = bd_job_input_read((bd_slice){body, at}, BD_JOB_INPUT_JSON, (bd_slice){NULL, 0},
                                    type, count_only, &calls, &count, why, sizeof why);
    CHECK_INT(r, BD_ERR_LIMIT);
    CHECK_INT((long)calls, 0);
    CHECK_INT((long)count, 0);
    free(body);
}

int main(void)
{
    RUN(test_job_input_json_hands_on_accounts_in_order);
    RUN(test_job_input_json_refuses_other_shapes_and_disagreeing_types);
    RUN(test_job_input_text_skips_empty_lines_and_crs);
    RUN(test_job_input_csv_takes_first_cells_and_skips_a_header);
    RUN(test_job_input_stops_past_the_maximum);
    RUN(test_job_input_formats_by_content_type);
    RUN(test_job_input_json_errors_give_positions_not_values);
    RUN(test_job_input_json_takes_any_member_order);
    RUN(test_job_input_json_counts_before_handing_on);
    return TEST_EXIT();
}
