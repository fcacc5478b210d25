/* Tests for JSON Lines record parsing into bd_fields (and the bd_fields record itself). */
#include "ingest/jsonl.h"

#include "test.h"

static bd_fields *f;
static char why[256];

static bd_result parse(const char *line)
{
    why[0] = '\0';
    return bd_jsonl_parse(line, strlen(line), f, why, sizeof why);
}

/* Value of field name as a C string, "(absent)" when bd_fields_get says no. */
static const char *get(const char *name)
{
    bd_slice v;
    if (!bd_fields_get(f, name, &v))
        return "(absent)";
    return v.len == strlen(v.ptr) ? v.ptr : "(embedded NUL)";
}

TEST(test_string_values_are_decoded)
{
    CHECK_INT(parse("{\"email\":\"a@example.com\",\"user_name\":\"Ann\"}"), BD_OK);
    CHECK_INT(bd_fields_count(f), 2);
    CHECK_STR(get("email"), "a@example.com");
    CHECK_STR(get("user_name"), "Ann");
}

TEST(test_members_keep_input_order)
{
    CHECK_INT(parse("{\"z\":\"1\",\"a\":\"2\",\"m\":\"3\"}"), BD_OK);
    CHECK_STR(bd_fields_name(f, 0), "z");
    CHECK_STR(bd_fields_name(f, 1), "a");
    CHECK_STR(bd_fields_name(f, 2), "m");
}

TEST(test_escapes_are_decoded)
{
    CHECK_INT(parse("{\"d\":\"say \\\"hi\\\"\\n\\\\ \\u00e9 \\ud83d\\ude00 \\/\"}"), BD_OK);
    CHECK_STR(get("d"), "say \"hi\"\n\\ \xC3\xA9 \xF0\x9F\x98\x80 /");
}

TEST(test_u0000_gives_a_nul_byte_with_exact_length)
{
    CHECK_INT(parse("{\"password\":\"ab\\u0000cd\"}"), BD_OK);
    bd_slice v;
    CHECK(bd_fields_get(f, "password", &v));
    CHECK_INT(v.len, 5);
    CHECK(memcmp(v.ptr, "ab\0cd", 5) == 0);
}

TEST(test_numbers_keep_their_json_text)
{
    CHECK_INT(parse("{\"a\":42,\"b\":7.5,\"c\":-0,\"d\":1e5,\"e\":12345678901234567890,"
                    "\"f\":0.1000}"),
              BD_OK);
    CHECK_STR(get("a"), "42");
    CHECK_STR(get("b"), "7.5");
    CHECK_STR(get("c"), "-0");
    CHECK_STR(get("d"), "1e5");
    CHECK_STR(get("e"), "12345678901234567890");
    CHECK_STR(get("f"), "0.1000");
}

TEST(test_booleans_become_true_and_false)
{
    CHECK_INT(parse("{\"a\":true,\"b\":false}"), BD_OK);
    CHECK_STR(get("a"), "true");
    CHECK_STR(get("b"), "false");
}

TEST(test_null_is_listed_but_absent)
{
    CHECK_INT(parse("{\"phone_number\":null,\"email\":\"\"}"), BD_OK);
    CHECK_INT(bd_fields_count(f), 2);
    CHECK_STR(bd_fields_name(f, 0), "phone_number");
    CHECK_STR(get("phone_number"), "(absent)");
    bd_slice v;
    CHECK(!bd_fields_value(f, 0, &v));
}

TEST(test_empty_string_is_present_with_length_zero)
{
    CHECK_INT(parse("{\"email\":\"\"}"), BD_OK);
    bd_slice v = {NULL, 99};
    CHECK(bd_fields_get(f, "email", &v));
    CHECK_INT(v.len, 0);
}

TEST(test_missing_name_is_absent)
{
    CHECK_INT(parse("{\"email\":\"a@example.com\"}"), BD_OK);
    CHECK_STR(get("password"), "(absent)");
}

TEST(test_names_compare_case_sensitively)
{
    CHECK_INT(parse("{\"Email\":\"a@example.com\"}"), BD_OK);
    CHECK_STR(get("email"), "(absent)");
    CHECK_STR(get("Email"), "a@example.com");
}

TEST(test_nested_object_becomes_compact_json_text)
{
    CHECK_INT(parse("{\"other_attributes\": { \"city\" : \"Paris, \\\"FR\\\"\" ,\n"
                    "\"tags\": [ 1 , 2.50, {\"k\" : null} ] } }"),
              BD_OK);
    CHECK_STR(get("other_attributes"),
              "{\"city\":\"Paris, \\\"FR\\\"\",\"tags\":[1,2.50,{\"k\":null}]}");
}

TEST(test_nested_string_keeps_inner_spaces)
{
    CHECK_INT(parse("{\"o\":{\"a b\":\" x  y \"}}"), BD_OK);
    CHECK_STR(get("o"), "{\"a b\":\" x  y \"}");
}

TEST(test_array_value_becomes_compact_json_text)
{
    CHECK_INT(parse("{\"a\":[ ],\"b\":[\"x\" , \"y\"]}"), BD_OK);
    CHECK_STR(get("a"), "[]");
    CHECK_STR(get("b"), "[\"x\",\"y\"]");
}

TEST(test_surrounding_whitespace_and_cr_are_allowed)
{
    CHECK_INT(parse("  {\"a\":\"1\"}  \r"), BD_OK);
    CHECK_STR(get("a"), "1");
}

TEST(test_empty_object_has_no_fields)
{
    CHECK_INT(parse("{}"), BD_OK);
    CHECK_INT(bd_fields_count(f), 0);
}

TEST(test_bad_json_is_invalid_with_column)
{
    CHECK_INT(parse("{\"a\":1,}"), BD_ERR_INVALID);
    CHECK_STR(why, "not valid JSON after the value of \"a\": a field name in double quotes or '}' "
                   "expected");
    CHECK_INT(bd_fields_count(f), 0);
}

TEST(test_truncated_line_is_invalid)
{
    CHECK_INT(parse("{\"a\":\"abc"), BD_ERR_INVALID);
    CHECK_STR(why, "not valid JSON in the value of \"a\": the line ends inside the object");
    CHECK_INT(parse("{\"a\":\"abc\""), BD_ERR_INVALID);
    CHECK_STR(why, "not valid JSON after the value of \"a\": the line ends inside the object");
    CHECK_INT(parse("{\"a\":1,\"b\""), BD_ERR_INVALID);
    CHECK_STR(why, "not valid JSON after the value of \"a\": the line ends inside the object");
    CHECK_INT(parse("{\"a\""), BD_ERR_INVALID);
    CHECK_STR(why, "not valid JSON before the first field: the line ends inside the object");
    CHECK_INT(parse("{"), BD_ERR_INVALID);
    CHECK_STR(why, "not valid JSON before the first field: the line ends inside the object");
}

TEST(test_trailing_text_is_invalid)
{
    CHECK_INT(parse("{\"a\":1} {\"b\":2}"), BD_ERR_INVALID);
    CHECK_STR(why, "not valid JSON after the value of \"a\": text after the end of the object");
}

TEST(test_invalid_utf8_is_invalid)
{
    CHECK_INT(parse("{\"a\":\"\xFF\"}"), BD_ERR_INVALID);
    CHECK_STR(why, "not valid JSON in the value of \"a\": a byte that is not valid UTF-8");
}

TEST(test_non_object_is_invalid)
{
    CHECK_INT(parse("[{\"a\":1}]"), BD_ERR_INVALID);
    CHECK_STR(why, "each line must hold one JSON object, not an array");
    CHECK_INT(parse("\"a@example.com\""), BD_ERR_INVALID);
    CHECK_STR(why, "each line must hold one JSON object, not a string");
    CHECK_INT(parse("42"), BD_ERR_INVALID);
    CHECK_STR(why, "each line must hold one JSON object, not a number");
    CHECK_INT(parse("null"), BD_ERR_INVALID);
    CHECK_STR(why, "each line must hold one JSON object, not null");
}

TEST(test_empty_line_is_invalid)
{
    CHECK_INT(parse("  "), BD_ERR_INVALID);
    CHECK_STR(why, "the line is empty: each line must hold one JSON object");
}

TEST(test_duplicate_key_is_invalid)
{
    CHECK_INT(parse("{\"email\":\"a@example.com\",\"email\":\"b@example.com\"}"), BD_ERR_INVALID);
    CHECK_STR(why, "a field name appears twice: \"email\"");
}

/* Names one of which starts another are two names; a third spelling the first again is not. */
TEST(test_names_that_start_alike_are_not_duplicates)
{
    CHECK_INT(parse("{\"leakId\":\"a\",\"leak\":\"b\",\"leakIdX\":\"c\",\"l\":1}"), BD_OK);
    CHECK_INT(bd_fields_count(f), 4);
    CHECK_INT(parse("{\"leak\":\"a\",\"leakId\":\"b\",\"leak\":\"c\"}"), BD_ERR_INVALID);
    CHECK_STR(why, "a field name appears twice: \"leak\"");
}

TEST(test_duplicate_key_in_nested_object_is_invalid)
{
    CHECK_INT(parse("{\"o\":{\"k\":1,\"k\":2}}"), BD_ERR_INVALID);
    CHECK_STR(why, "a field name appears twice inside \"o\"");
}

TEST(test_empty_key_is_invalid)
{
    CHECK_INT(parse("{\"\":\"x\"}"), BD_ERR_INVALID);
    CHECK_STR(why, "a field name must not be empty or contain a NUL byte");
}

TEST(test_nul_in_key_is_invalid)
{
    CHECK_INT(parse("{\"a\\u0000b\":\"x\"}"), BD_ERR_INVALID);
}

TEST(test_more_than_64_members_is_invalid)
{
    char line[2048];
    size_t n = 0;
    line[n++] = '{';
    for (int i = 0; i < 65; i++)
        n += (size_t)snprintf(line + n, sizeof line - n, "%s\"k%d\":%d", i ? "," : "", i, i);
    line[n++] = '}';
    line[n] = '\0';
    CHECK_INT(parse(line), BD_ERR_INVALID);
    CHECK_STR(why, "a record may have at most 64 fields, this one has 65");
}

TEST(test_64_members_are_accepted)
{
    char line[2048];
    size_t n = 0;
    line[n++] = '{';
    for (int i = 0; i < 64; i++)
        n += (size_t)snprintf(line + n, sizeof line - n, "%s\"k%d\":%d", i ? "," : "", i, i);
    line[n++] = '}';
    line[n] = '\0';
    CHECK_INT(parse(line), BD_OK);
    CHECK_INT(bd_fields_count(f), 64);
    CHECK_STR(get("k63"), "63");
}

TEST(test_parse_replaces_the_previous_record)
{
    CHECK_INT(parse("{\"a\":\"1\",\"b\":\"2\"}"), BD_OK);
    CHECK_INT(parse("{\"c\":\"3\"}"), BD_OK);
    CHECK_INT(bd_fields_count(f), 1);
    CHECK_STR(get("a"), "(absent)");
    CHECK_STR(get("c"), "3");
}

TEST(test_line_need_not_be_nul_terminated)
{
    const char buf[] = "{\"a\":\"1\"}XXXX";
    CHECK_INT(bd_jsonl_parse(buf, 9, f, why, sizeof why), BD_OK);
    CHECK_STR(get("a"), "1");
}

TEST(test_escaped_key_is_decoded)
{
    CHECK_INT(parse("{\"\\u0065mail\":\"a@example.com\"}"), BD_OK);
    CHECK_STR(get("email"), "a@example.com");
}

TEST(test_duplicate_key_spelled_with_an_escape_is_invalid)
{
    CHECK_INT(parse("{\"email\":\"a\",\"\\u0065mail\":\"b\"}"), BD_ERR_INVALID);
    CHECK_STR(why, "a field name appears twice: a field"); /* written with an escape */
}

TEST(test_lone_surrogate_escape_is_invalid)
{
    CHECK_INT(parse("{\"a\":\"\\ud800\"}"), BD_ERR_INVALID);
    CHECK_STR(why, "not valid JSON in the value of \"a\": an invalid \\u escape");
}

TEST(test_leading_zero_and_bare_minus_are_invalid)
{
    CHECK_INT(parse("{\"a\":01}"), BD_ERR_INVALID);
    CHECK_INT(parse("{\"a\":-}"), BD_ERR_INVALID);
    CHECK_INT(parse("{\"a\":1.}"), BD_ERR_INVALID);
}

TEST(test_raw_control_character_in_a_string_is_invalid)
{
    CHECK_INT(parse("{\"a\":\"x\ty\"}"), BD_ERR_INVALID);
    CHECK_STR(why, "not valid JSON in the value of \"a\": a control character inside a string "
                   "(it must be escaped)");
}

/* Rejection reasons are printed and logged: they must never carry the line's bytes, and in a
 * breach dump the bad bytes are often in a password (issue 13). */
static void check_no_password_bytes(const char *password)
{
    size_t n = strlen(password);
    for (size_t i = 0; i + 4 <= n; i++) {
        char piece[5];
        memcpy(piece, password + i, 4);
        piece[4] = '\0';
        if (strstr(why, piece))
            TEST_FAIL("\"%s\" of the password is in \"%s\"", piece, why);
    }
    for (const char *p = why; *p; p++)
        if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f)
            TEST_FAIL("byte 0x%02x is in \"%s\"", (unsigned char)*p, why);
}

TEST(test_reasons_name_the_field_and_never_quote_the_password)
{
    CHECK_INT(parse("{\"email\":\"a@example.com\",\"password\":\"Zq9#Pw\xe9Kv7\"}"),
              BD_ERR_INVALID);
    CHECK_STR(why, "not valid JSON in the value of \"password\": a byte that is not valid UTF-8");
    check_no_password_bytes("Zq9#Pw\xe9Kv7");
    CHECK_INT(parse("{\"password\":\"Zq9#Pw\x01Kv7\",\"email\":\"b@example.com\"}"),
              BD_ERR_INVALID);
    CHECK_STR(why, "not valid JSON in the value of \"password\": a control character inside a "
                   "string (it must be escaped)");
    check_no_password_bytes("Zq9#Pw\x01Kv7");
    CHECK_INT(parse("{\"email\":\"c@example.com\",\"password\":Zq9_PwKv7}"), BD_ERR_INVALID);
    CHECK_STR(why, "not valid JSON in the value of \"password\": a word that is not JSON (text "
                   "needs double quotes)");
    check_no_password_bytes("Zq9_PwKv7");
    CHECK_INT(parse("{\"password\":\"Zq9#PwKv7\" oops}"), BD_ERR_INVALID);
    CHECK_STR(why, "not valid JSON after the value of \"password\": ',' or '}' expected");
    check_no_password_bytes("Zq9#PwKv7");
    CHECK_INT(parse("{\"password\":\"Zq9#PwKv7\""), BD_ERR_INVALID);
    CHECK_STR(why, "not valid JSON after the value of \"password\": the line ends inside the "
                   "object");
    CHECK_INT(parse("{\"password\":\"Zq9#Pw\\qKv7\"}"), BD_ERR_INVALID);
    CHECK_STR(why, "not valid JSON in the value of \"password\": an invalid backslash escape");
    check_no_password_bytes("Zq9#Pw\\qKv7");
    CHECK_INT(parse("{\"password\":[1,{\"k\":Zq9_PwKv7}]}"), BD_ERR_INVALID);
    CHECK_STR(why, "not valid JSON in the value of \"password\": a word that is not JSON (text "
                   "needs double quotes)");
}

TEST(test_a_string_in_the_place_of_a_name_is_never_quoted)
{
    /* a missing ':' or ',' puts a value where a name belongs: it is not named */
    CHECK_INT(parse("{\"password\" \"Zq9#PwKv7\"}"), BD_ERR_INVALID);
    CHECK_STR(why, "not valid JSON before the first field: ':' expected after a field name");
    check_no_password_bytes("Zq9#PwKv7");
    CHECK_INT(parse("{\"email\":\"a@example.com\" \"Zq9#PwKv7\"}"), BD_ERR_INVALID);
    CHECK_STR(why, "not valid JSON after the value of \"email\": ',' or '}' expected");
    check_no_password_bytes("Zq9#PwKv7");
    CHECK_INT(parse("{Zq9_PwKv7:1}"), BD_ERR_INVALID);
    CHECK_STR(why, "not valid JSON before the first field: a field name in double quotes or '}' "
                   "expected");
}

TEST(test_a_field_name_that_is_not_plain_is_not_quoted)
{
    CHECK_INT(parse("{\"Pa ss\":\"x\xff\"}"), BD_ERR_INVALID);
    CHECK_STR(why, "not valid JSON in the value of a field: a byte that is not valid UTF-8");
    CHECK_INT(parse("{\"a\":1,\"Plain\xe9name\":\"x\"}"), BD_ERR_INVALID);
    CHECK_STR(why, "not valid JSON after the value of \"a\": a byte that is not valid UTF-8");
}

TEST(test_fast_path_and_jansson_give_the_same_fields)
{
    static const char *lines[] = {
        "{\"email\":\"a@example.com\",\"n\":-12.50,\"t\":true,\"z\":null}",
        "{ \"o\" : { \"a\" : [ 1 , { \"b\" : \"c\\n\" } ] , \"b\" : { } } , \"e\":\"\" }",
        ("{\"s\":\"\\u00e9\\ud83d\\ude00\\\"\\\\\\/"
         "\\b\\f\\n\\r\\t\",\"u\":\"\xC3\xA9\xF0\x9F\x98\x80\"}"),
        "{\"a\":[],\"b\":{},\"c\":[[[]]],\"d\":0,\"e\":-0.0}",
        "{\"p\":\"a\\u0000b\"}",
    };
    bd_fields *ref = bd_fields_new();
    if (!ref)
        return;
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
        CHECK_INT(parse(lines[i]), BD_OK);
        CHECK_INT(bd_jsonl_parse_jansson(lines[i], strlen(lines[i]), ref, why, sizeof why), BD_OK);
        CHECK_INT(bd_fields_count(f), bd_fields_count(ref));
        for (size_t k = 0; k < bd_fields_count(f) && k < bd_fields_count(ref); k++) {
            bd_slice a = {NULL, 0}, b = {NULL, 0};
            CHECK_STR(bd_fields_name(f, k), bd_fields_name(ref, k));
            CHECK_INT(bd_fields_value(f, k, &a), bd_fields_value(ref, k, &b));
            CHECK(a.len == b.len && (a.len == 0 || memcmp(a.ptr, b.ptr, a.len) == 0));
        }
    }
    bd_fields_free(ref);
}

TEST(test_fields_add_rejects_empty_and_nul_names)
{
    bd_fields_clear(f);
    CHECK_INT(bd_fields_add(f, "", 0, "v", 1), BD_ERR_INVALID);
    CHECK_INT(bd_fields_add(f, "a\0b", 3, "v", 1), BD_ERR_INVALID);
    CHECK_INT(bd_fields_count(f), 0);
}

TEST(test_fields_append_extends_the_last_value)
{
    bd_fields_clear(f);
    CHECK_INT(bd_fields_add(f, "a", 1, "x", 1), BD_OK);
    CHECK_INT(bd_fields_add(f, "b", 1, "12", 2), BD_OK);
    CHECK_INT(bd_fields_append(f, "34", 2), BD_OK);
    CHECK_STR(get("a"), "x");
    CHECK_STR(get("b"), "1234");
}

TEST(test_fields_cap_refuses_a_value_past_the_byte_limit)
{
    bd_fields_clear(f);
    static char big[BD_FIELDS_BYTES_MAX];
    memset(big, 'x', sizeof big);
    CHECK_INT(bd_fields_add(f, "a", 1, "1", 1), BD_OK);
    CHECK_INT(bd_fields_add(f, "b", 1, big, sizeof big), BD_ERR_LIMIT);
    CHECK_INT(bd_fields_count(f), 1);
    CHECK_STR(get("a"), "1");
    CHECK_INT(bd_fields_add(f, "c", 1, "2", 1), BD_OK);
    CHECK_STR(get("c"), "2");
}

int main(void)
{
    f = bd_fields_new();
    if (!f)
        return 1;
    RUN(test_string_values_are_decoded);
    RUN(test_members_keep_input_order);
    RUN(test_escapes_are_decoded);
    RUN(test_u0000_gives_a_nul_byte_with_exact_length);
    RUN(test_numbers_keep_their_json_text);
    RUN(test_booleans_become_true_and_false);
    RUN(test_null_is_listed_but_absent);
    RUN(test_empty_string_is_present_with_length_zero);
    RUN(test_missing_name_is_absent);
    RUN(test_names_compare_case_sensitively);
    RUN(test_nested_object_becomes_compact_json_text);
    RUN(test_nested_string_keeps_inner_spaces);
    RUN(test_array_value_becomes_compact_json_text);
    RUN(test_surrounding_whitespace_and_cr_are_allowed);
    RUN(test_empty_object_has_no_fields);
    RUN(test_bad_json_is_invalid_with_column);
    RUN(test_truncated_line_is_invalid);
    RUN(test_trailing_text_is_invalid);
    RUN(test_invalid_utf8_is_invalid);
    RUN(test_non_object_is_invalid);
    RUN(test_empty_line_is_invalid);
    RUN(test_duplicate_key_is_invalid);
    RUN(test_names_that_start_alike_are_not_duplicates);
    RUN(test_duplicate_key_in_nested_object_is_invalid);
    RUN(test_empty_key_is_invalid);
    RUN(test_nul_in_key_is_invalid);
    RUN(test_more_than_64_members_is_invalid);
    RUN(test_64_members_are_accepted);
    RUN(test_parse_replaces_the_previous_record);
    RUN(test_line_need_not_be_nul_terminated);
    RUN(test_escaped_key_is_decoded);
    RUN(test_duplicate_key_spelled_with_an_escape_is_invalid);
    RUN(test_lone_surrogate_escape_is_invalid);
    RUN(test_leading_zero_and_bare_minus_are_invalid);
    RUN(test_raw_control_character_in_a_string_is_invalid);
    RUN(test_reasons_name_the_field_and_never_quote_the_password);
    RUN(test_a_string_in_the_place_of_a_name_is_never_quoted);
    RUN(test_a_field_name_that_is_not_plain_is_not_quoted);
    RUN(test_fast_path_and_jansson_give_the_same_fields);
    RUN(test_fields_add_rejects_empty_and_nul_names);
    RUN(test_fields_append_extends_the_last_value);
    RUN(test_fields_cap_refuses_a_value_past_the_byte_limit);
    bd_fields_free(f);
    return TEST_EXIT();
}
