/* Tests for --map parsing, column planning and carrying rows through a plan. */
#include "ingest/colmap.h"

#include <stdlib.h>

#include "test.h"

static char why[256];
static const char *const FIELDS[] = {"email",     "password",         "ip_address",
                                     "user_name", "other_attributes", NULL};

static bd_colmap *parse_ok(const char *spec)
{
    bd_colmap *m = NULL;
    why[0] = '\0';
    if (bd_colmap_parse(spec, &m, why, sizeof why) != BD_OK)
        TEST_FAIL("parse %s: %s", spec, why);
    return m;
}

static const char *parse_bad(const char *spec)
{
    bd_colmap *m = NULL;
    why[0] = '\0';
    if (bd_colmap_parse(spec, &m, why, sizeof why) != BD_ERR_INVALID)
        TEST_FAIL("parse %s: accepted", spec);
    bd_colmap_free(m);
    return why;
}

static bd_csv_header *header(const char *names)
{
    bd_csv_header *h = bd_csv_header_new();
    if (bd_csv_parse_header(names, strlen(names), h, why, sizeof why) != BD_OK)
        TEST_FAIL("header %s: %s", names, why);
    return h;
}

TEST(test_map_pairs_are_parsed_in_order_with_spaces_trimmed)
{
    bd_colmap *m = parse_ok("Email=email, Pass = password,IP Addr=ip_address");
    if (!m)
        return;
    CHECK_INT(bd_colmap_count(m), 3);
    CHECK_STR(bd_colmap_source(m, 0), "Email");
    CHECK_STR(bd_colmap_field(m, 0), "email");
    CHECK_STR(bd_colmap_source(m, 1), "Pass");
    CHECK_STR(bd_colmap_field(m, 1), "password");
    CHECK_STR(bd_colmap_source(m, 2), "IP Addr");
    CHECK_STR(bd_colmap_field(m, 2), "ip_address");
    bd_colmap_free(m);
}

TEST(test_bad_map_specs_say_which_pair)
{
    CHECK_STR(parse_bad(""), "--map: pair 1 has no '=' (Column=field expected)");
    CHECK_STR(parse_bad("A=email,B"), "--map: pair 2 has no '=' (Column=field expected)");
    CHECK_STR(parse_bad("=email"), "--map: pair 1 needs one column name, '=', one field name");
    CHECK_STR(parse_bad("A="), "--map: pair 1 needs one column name, '=', one field name");
    CHECK_STR(parse_bad("A=b=c"), "--map: pair 1 needs one column name, '=', one field name");
    CHECK_STR(parse_bad("A=email,"), "--map: pair 2 has no '=' (Column=field expected)");
    CHECK_STR(parse_bad("A=email,A=password"), "--map: pairs 1 and 2 name the same column");
    CHECK_STR(parse_bad("A=email,B=email"), "--map: pairs 1 and 2 name the same field");
}

TEST(test_plan_maps_keeps_field_named_columns_and_sends_the_rest_to_other_attributes)
{
    bd_colmap *m = parse_ok("Mail=email,Pass=password");
    bd_csv_header *h = header("Mail,ip_address,Pass,City,Zip");
    int plan[BD_FIELDS_MAX];
    CHECK_INT(bd_colmap_plan(m, h, FIELDS, false, plan, why, sizeof why), BD_OK);
    CHECK_INT(plan[0], 0);
    CHECK_INT(plan[1], BD_COL_SAME);
    CHECK_INT(plan[2], 1);
    CHECK_INT(plan[3], BD_COL_OTHER);
    CHECK_INT(plan[4], BD_COL_OTHER);

    bd_fields *in = bd_fields_new(), *out = bd_fields_new();
    bd_buf scratch;
    bd_buf_init(&scratch, 1 << 20);
    const char *row = "a@x.com,192.0.2.1,pw,\"Köln \"\"Süd\"\"\",";
    CHECK_INT(bd_csv_parse_row(h, row, strlen(row), in, why, sizeof why), BD_OK);
    CHECK_INT(bd_colmap_apply(m, h, plan, in, out, &scratch), BD_OK);
    CHECK_INT(bd_fields_count(out), 4);
    bd_slice v;
    CHECK(bd_fields_get(out, "email", &v) && strcmp(v.ptr, "a@x.com") == 0);
    CHECK(bd_fields_get(out, "ip_address", &v) && strcmp(v.ptr, "192.0.2.1") == 0);
    CHECK(bd_fields_get(out, "password", &v) && strcmp(v.ptr, "pw") == 0);
    CHECK(bd_fields_get(out, "other_attributes", &v));
    CHECK_STR(v.ptr, "{\"City\":\"Köln \\\"Süd\\\"\"}"); /* the empty Zip is left out */

    CHECK_INT(bd_colmap_plan(m, h, FIELDS, true, plan, why, sizeof why), BD_OK);
    CHECK_INT(plan[3], BD_COL_DROP);
    CHECK_INT(bd_colmap_apply(m, h, plan, in, out, &scratch), BD_OK);
    CHECK_INT(bd_fields_count(out), 3);
    CHECK(!bd_fields_get(out, "other_attributes", &v));
    bd_buf_free(&scratch);
    bd_fields_free(in);
    bd_fields_free(out);
    bd_csv_header_free(h);
    bd_colmap_free(m);
}

TEST(test_plans_that_cannot_work_are_refused)
{
    static const char *const no_attrs[] = {"email", "password", NULL};
    int plan[BD_FIELDS_MAX];
    bd_colmap *m = parse_ok("Mail=email");
    bd_csv_header *h = header("Mail,email");
    CHECK_INT(bd_colmap_plan(m, h, FIELDS, false, plan, why, sizeof why), BD_ERR_INVALID);
    CHECK_STR(why, "columns 1 and 2 would both be the field email");
    bd_csv_header_free(h);

    h = header("Other");
    CHECK_INT(bd_colmap_plan(m, h, FIELDS, false, plan, why, sizeof why), BD_ERR_INVALID);
    CHECK_STR(why, "--map: the file has no column 'Mail'");
    bd_csv_header_free(h);
    bd_colmap_free(m);

    m = parse_ok("Mail=colour");
    h = header("Mail");
    CHECK_INT(bd_colmap_plan(m, h, FIELDS, false, plan, why, sizeof why), BD_ERR_INVALID);
    CHECK_STR(why, "--map: 'colour' is not a field of this import");
    bd_csv_header_free(h);
    bd_colmap_free(m);

    m = parse_ok("Mail=email");
    h = header("Mail,City");
    CHECK_INT(bd_colmap_plan(m, h, no_attrs, false, plan, why, sizeof why), BD_ERR_INVALID);
    CHECK_STR(why, "this import has no other_attributes for the unmapped columns: map every "
                   "column or give --drop-unmapped");
    CHECK_INT(bd_colmap_plan(m, h, no_attrs, true, plan, why, sizeof why), BD_OK);
    bd_csv_header_free(h);

    h = header("Mail,other_attributes,City");
    CHECK_INT(bd_colmap_plan(m, h, FIELDS, false, plan, why, sizeof why), BD_ERR_INVALID);
    CHECK_STR(why, "column 2 is other_attributes, where the unmapped columns would go: map them "
                   "or give --drop-unmapped");
    bd_csv_header_free(h);
    bd_colmap_free(m);
}

TEST(test_a_plan_without_a_map_only_drops)
{
    bd_csv_header *h = header("email,Junk");
    int plan[BD_FIELDS_MAX];
    CHECK_INT(bd_colmap_plan(NULL, h, FIELDS, true, plan, why, sizeof why), BD_OK);
    CHECK_INT(plan[0], BD_COL_SAME);
    CHECK_INT(plan[1], BD_COL_DROP);
    bd_csv_header_free(h);
}

int main(void)
{
    RUN(test_map_pairs_are_parsed_in_order_with_spaces_trimmed);
    RUN(test_bad_map_specs_say_which_pair);
    RUN(test_plan_maps_keeps_field_named_columns_and_sends_the_rest_to_other_attributes);
    RUN(test_plans_that_cannot_work_are_refused);
    RUN(test_a_plan_without_a_map_only_drops);
    return TEST_EXIT();
}
