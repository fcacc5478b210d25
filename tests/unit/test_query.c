/* Card query language: every rule of PRODUCT.md "Card query language" as a row of
 * (query, canonical tree) or (query, error position, message fragment). */
#include <stdlib.h>
#include <string.h>

#include "query/query.h"
#include "test.h"

#define HIDDEN "only the first 6 and last 4 digits of a card number can be searched"
#define HASH64_LOWER "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
#define HASH64_UPPER "9F86D081884C7D659A2FEAA0C55AD015A3BF4F1B2B0B822CD15D6C15B0F00A08"
#define EXACT_TOO_MANY "one exact card lookup too many at"

typedef struct {
    const char *query;
    const char *want; /* canonical form */
} ok_row;

typedef struct {
    const char *query;
    int pos;
    const char *fragment; /* must occur in the message */
} err_row;

static const ok_row OK_ROWS[] = {
    /* empty, white space, match-all */
    {"", "(ALL)"},
    {"   \t\n ", "(ALL)"},
    {"*", "(ALL)"},
    {"number:*", "(ALL)"},
    /* precedence and adjacency */
    {"owner:a OR owner:b AND owner:c", "(OR (owner \"a\") (AND (owner \"b\") (owner \"c\")))"},
    {"owner:a AND owner:b OR owner:c", "(OR (AND (owner \"a\") (owner \"b\")) (owner \"c\"))"},
    {"(owner:a OR owner:b) AND owner:c", "(AND (OR (owner \"a\") (owner \"b\")) (owner \"c\"))"},
    {"owner:a owner:b OR owner:c", "(OR (AND (owner \"a\") (owner \"b\")) (owner \"c\"))"},
    {"owner:a owner:b owner:c", "(AND (owner \"a\") (owner \"b\") (owner \"c\"))"},
    {"NOT owner:a AND owner:b", "(AND (NOT (owner \"a\")) (owner \"b\"))"},
    {"NOT (owner:a AND owner:b)", "(NOT (AND (owner \"a\") (owner \"b\")))"},
    {"owner:a NOT owner:b", "(AND (owner \"a\") (NOT (owner \"b\")))"},
    {"owner:a OR NOT owner:b", "(OR (owner \"a\") (NOT (owner \"b\")))"},
    {"(owner:a OR owner:b) (owner:c owner:d)",
     "(AND (OR (owner \"a\") (owner \"b\")) (owner \"c\") (owner \"d\"))"},
    {"owner:a OR (owner:b OR owner:c)", "(OR (owner \"a\") (owner \"b\") (owner \"c\"))"},
    {"((((owner:a))))", "(owner \"a\")"},
    /* synonyms and NOT */
    {"owner:a && owner:b || owner:c", "(OR (AND (owner \"a\") (owner \"b\")) (owner \"c\"))"},
    {"owner:bob&&cvv:123", "(AND (owner \"bob\") (cvv \"123\"))"},
    {"!owner:a", "(NOT (owner \"a\"))"},
    {"NOT owner:bob", "(NOT (owner \"bob\"))"},
    {"NOT NOT owner:bob", "(owner \"bob\")"},
    {"!(!owner:x)", "(owner \"x\")"},
    {"NOT NOT NOT owner:bob", "(NOT (owner \"bob\"))"},
    /* field names */
    {"OWNER:x", "(owner \"x\")"},
    {"LeakId:x", "(leakId \"x\")"},
    {"CREATEDAT:2020-01-02", "(createdAt [2020-01-02 00:00:00 TO 2020-01-02 23:59:59])"},
    {"owner : john", "(owner \"john\")"},
    /* number patterns */
    {"411111*", "(number bin=411111 last4= len>=6)"},
    {"number:411111*1111", "(number bin=411111 last4=1111 len>=10)"},
    {"*1111", "(number bin= last4=1111 len>=4)"},
    {"411111XXXXXX1111", "(number bin=411111 last4=1111 len=16)"},
    {"411111xxxxxx1111", "(number bin=411111 last4=1111 len=16)"},
    {"411111??????1111", "(number bin=411111 last4=1111 len=16)"},
    {"378282XXXXX0005", "(number bin=378282 last4=0005 len=15)"},
    {"4111*", "(number bin=4111 last4= len>=4)"},
    {"41111?*", "(number bin=41111 last4= len>=6)"},
    {"4?1111*", "(number bin=4?1111 last4= len>=6)"},
    {"*1?11", "(number bin= last4=1?11 len>=4)"},
    {"*X1111", "(number bin= last4=1111 len>=5)"},
    {"411111XX*", "(number bin=411111 last4= len>=8)"},
    {"4111**1111", "(number bin=4111 last4=1111 len>=8)"},
    {"41*X*11", "(number bin=41 last4=11 len>=5)"},
    {"XXXXXXXXXXXXXXXX", "(number bin= last4= len=16)"},
    {"XXXXXXXXXXXX", "(number bin= last4= len=12)"},
    {"XXXXXXXXXXXXXXXXXXX", "(number bin= last4= len=19)"},
    {"X*", "(number bin= last4= len>=1)"},
    {"number:\"4111 11XX XXXX 1111\"", "(number bin=411111 last4=1111 len=16)"},
    {"number:\"4111 11** 1111\"", "(number bin=411111 last4=1111 len>=10)"},
    /* short numbers: 12 digits hide only positions 7-8, 13 digits 7-9 */
    {"411111XX1111", "(number bin=411111 last4=1111 len=12)"},
    {"411111XXX1111", "(number bin=411111 last4=1111 len=13)"},
    {"411111*?1111", "(number bin=411111 last4=1111 len>=11)"},
    {"41111?X?*", "(number bin=41111 last4= len>=8)"},
    /* full numbers */
    {"4111111111111111", "(number exact=4111111111111111)"},
    {"number:\"4111 1111-1111 1111\"", "(number exact=4111111111111111)"},
    {"\" 4111-1111-1111-1111 \"", "(number exact=4111111111111111)"},
    {"123456789012", "(number exact=123456789012)"},
    {"1234567890123456789", "(number exact=1234567890123456789)"},
    /* Hash */
    {"Hash:" HASH64_LOWER, "(Hash " HASH64_LOWER ")"},
    {"hash:" HASH64_UPPER, "(Hash " HASH64_LOWER ")"},
    /* one exact lookup per query, with anything else around it */
    {"4111111111111111 AND 411111*1111",
     "(AND (number exact=4111111111111111) (number bin=411111 last4=1111 len>=10))"},
    {"NOT 4111111111111111", "(NOT (number exact=4111111111111111))"},
    {"Hash:" HASH64_LOWER " OR owner:john", "(OR (Hash " HASH64_LOWER ") (owner \"john\"))"},
    /* owner and bank */
    {"owner:John", "(owner \"john\")"},
    {"owner:jo*", "(owner \"jo\"*)"},
    {"owner:\"John Smith\"", "(owner \"john\" \"smith\")"},
    {"owner:\"john smi*\"", "(owner \"john\" \"smi\"*)"},
    {"owner:o'brien", "(owner \"o\" \"brien\")"},
    {"owner:\"john\"", "(owner \"john\")"},
    {"bank:\"First-National  Bank\"", "(bank \"first\" \"national\" \"bank\")"},
    {"bank:Soci\xc3\xa9t\xc3\xa9", "(bank \"soci\\xc3\\xa9t\\xc3\\xa9\")"},
    {"owner:AND", "(owner \"and\")"},
    {"owner:!bob", "(owner \"bob\")"},
    /* quoting and escapes */
    {"owner:\"a \\\"b\\\" c\\\\d\"", "(owner \"a\" \"b\" \"c\" \"d\")"},
    {"owner:jo\\*", "(owner \"jo\")"},
    {"owner:a\\ b", "(owner \"a\" \"b\")"},
    {"owner:a\\(b\\)", "(owner \"a\" \"b\")"},
    {"leakId:a\\*b", "(leakId \"a*b\")"},
    {"leakId:\"x:y (z)\"", "(leakId \"x:y (z)\")"},
    {"leakId:abc:def", "(leakId \"abc:def\")"},
    /* cvv, leakId */
    {"cvv:123", "(cvv \"123\")"},
    {"cvv:\"0123\"", "(cvv \"0123\")"},
    {"leakId:abc-123", "(leakId \"abc-123\")"},
    /* dates and ranges */
    {"createdAt:2020-01-02", "(createdAt [2020-01-02 00:00:00 TO 2020-01-02 23:59:59])"},
    {"createdAt:\"2020-01-02 10:00:00\"",
     "(createdAt [2020-01-02 10:00:00 TO 2020-01-02 10:00:00])"},
    {"createdAt:2020-01-02T10:00:00", "(createdAt [2020-01-02 10:00:00 TO 2020-01-02 10:00:00])"},
    {"expireDate:2025-01-31", "(expireDate [2025-01-31 TO 2025-01-31])"},
    {"expireDate:[2025-01-01 TO *]", "(expireDate [2025-01-01 TO *])"},
    {"expireDate:{2025-01-01 TO 2025-12-31}", "(expireDate {2025-01-01 TO 2025-12-31})"},
    {"expireDate:[* TO 2025-12-31}", "(expireDate [* TO 2025-12-31})"},
    {"expireDate:{* TO *}", "(expireDate [* TO *])"},
    {"createdAt:[2020-01-01 TO 2020-02-01]",
     "(createdAt [2020-01-01 00:00:00 TO 2020-02-01 23:59:59])"},
    {"createdAt:{2020-01-01 TO 2020-02-01}",
     "(createdAt {2020-01-01 23:59:59 TO 2020-02-01 00:00:00})"},
    {"createdAt:[2020-01-01 TO 2020-02-01}",
     "(createdAt [2020-01-01 00:00:00 TO 2020-02-01 00:00:00})"},
    {"createdAt:[\"2020-01-01 10:00:00\" TO 2020-01-01]",
     "(createdAt [2020-01-01 10:00:00 TO 2020-01-01 23:59:59])"},
    {"createdAt:[2020-01-01 TO \"2020-01-01 10:30:00\"}",
     "(createdAt [2020-01-01 00:00:00 TO 2020-01-01 10:30:00})"},
    {"createdAt:*", "(createdAt [* TO *])"},
    {"expireDate:[2024-02-29 TO 2024-02-29]", "(expireDate [2024-02-29 TO 2024-02-29])"},
    /* combined, as in the interface spec */
    {"number:411111* AND owner:\"John Smith\"",
     "(AND (number bin=411111 last4= len>=6) (owner \"john\" \"smith\"))"},
    {"cvv:123 AND expireDate:[2025-01-01 TO *]",
     "(AND (cvv \"123\") (expireDate [2025-01-01 TO *]))"},
    {"owner:john (411111XXXXXX1111 OR NOT cvv:123)",
     "(AND (owner \"john\") (OR (number bin=411111 last4=1111 len=16) (NOT (cvv \"123\"))))"},
};

static const err_row ERR_ROWS[] = {
    /* structure */
    {"(owner:a", 8, "expected ')' at 8 to close '(' at 0"},
    {"((owner:a) OR owner:b", 21, "expected ')' at 21"},
    {"owner:a)", 7, "unbalanced ')' at 7"},
    {"()", 1, "expected a term after '(' at 1, found ')'"},
    {"owner:a AND", 11, "expected a term after 'AND' at 11, found the end of the query"},
    {"owner:a OR", 10, "expected a term after 'OR' at 10"},
    {"owner:a &&", 10, "expected a term after '&&' at 10"},
    {"NOT", 3, "expected a term after 'NOT' at 3"},
    {"AND owner:a", 0, "expected a term at 0, found 'AND'"},
    {"owner:a AND AND owner:b", 12, "found 'AND'"},
    {"owner:a OR )", 11, "found ')'"},
    {":x", 0, "':' at 0 must follow a field name"},
    {"[2020-01-01 TO *]", 0, "a range must follow createdAt: or expireDate:"},
    {"owner:a ]", 8, "']' at 8 closes no range"},
    {"owner:", 6, "expected a value after 'owner:' at 6"},
    {"owner:(a OR b)", 6, "write owner:a OR owner:b"},
    {"\"owner\":x", 0, "field name at 0 is quoted"},
    /* quotes and escapes */
    {"owner:\"abc", 6, "quoted value starting at 6 has no closing '\"'"},
    {"owner:\"abc\\\"", 6, "has no closing"},
    {"owner:a\\", 7, "backslash at 7 escapes nothing"},
    /* unknown field, lower-case operator */
    {"foo:bar", 0, "field 'foo' at 0 is not searchable; fields are createdAt, number, Hash"},
    {"owner:a and owner:b", 8, "'a' at 8 is not a digit, X, ? or *: a term without a field"},
    /* number patterns */
    {"4111112*", 6, "pattern pins hidden digit 7 at 6: " HIDDEN},
    {"411111X1XXXX1111", 7, "pattern pins hidden digit 8 at 7: " HIDDEN},
    {"number:411111XXXXX11111", 18, "hidden digit 12 at 18"},
    {"*51111", 1, "pattern pins hidden digit 5 from the end at 1"},
    {"411111*X51111", 8, "hidden digit 5 from the end at 8"},
    {"4*1*1", 2, "pattern pins a digit between two * at 2"},
    {"x411111*", 6, "hidden digit 7 at 6"},
    {"411111", 0,
     "'411111' at 0 is not a whole card number (12 to 19 digits); to search by its "
     "first digits write 411111*"},
    {"41111?", 0, "has no * so it must cover a whole card number (12 to 19 digits)"},
    {"XXXXXXXXXXX", 0, "add * to match any length"},
    {"12345678901", 0, "is not a whole card number"},
    {"12345678901234567890", 19, "more than 19 digit positions at 19"},
    {"XXXXXXXXXXXXXXXXXXXX*", 19, "more than 19 digit positions"},
    {"4111-1111-1111-1111", 4, "spaces and dashes are allowed only in a quoted number"},
    {"number:4111a*", 11, "'a' at 11 is not a digit, X, ? or *: number patterns use"},
    {"number:\"\"", 7, "empty card number at 7"},
    {"number:41\\*", 10, "'*' at 10 is not a digit"},
    /* short numbers: the hidden middle is only two or three digits, still never pinned */
    {"4111111X1111", 6, "pattern pins hidden digit 7 at 6"},
    {"411111X11111", 7, "pattern pins hidden digit 8 at 7"},
    {"411111XX11111", 8, "pattern pins hidden digit 9 at 8"},
    {"41111?1*", 6, "pattern pins hidden digit 7 at 6"},
    {"*?11111", 2, "pattern pins hidden digit 5 from the end at 2"},
    {"411111*1*1111", 7, "pattern pins a digit between two * at 7"},
    /* at most one full number or Hash: per query, counted under NOT too; the position is the
     * second one's */
    {"4111111111111111 OR 4111111111111112", 20,
     EXACT_TOO_MANY " 20: a query may hold at most 1 full card number or Hash: term"},
    {"number:378282000000005 OR number:378282000010005 OR number:378282000020005", 26,
     EXACT_TOO_MANY " 26"},
    {"Hash:" HASH64_LOWER " OR hash:" HASH64_UPPER, 73, EXACT_TOO_MANY " 73"},
    {"378282246310005 NOT 378282246310006", 20, EXACT_TOO_MANY " 20"},
    {"NOT 4111111111111111 AND Hash:" HASH64_LOWER, 25, EXACT_TOO_MANY " 25"},
    {"(cvv:123 OR (owner:a AND \"4111 1111 1111 1111\")) OR NOT (Hash:" HASH64_LOWER ")", 57,
     EXACT_TOO_MANY " 57"},
    /* Hash */
    {"Hash:abc", 5, "Hash at 5 has 3 hexadecimal digits; it needs exactly 64"},
    {"Hash:" HASH64_LOWER "0", 5, "has 65 hexadecimal digits"},
    {"Hash:g" HASH64_LOWER, 5, "'g' at 5 is not a hexadecimal digit"},
    {"Hash:abc*", 8, "wildcard '*' at 8 is not supported on Hash"},
    /* owner and bank */
    {"owner:*", 6, "'*' at 6 must end a word"},
    {"owner:*son", 6, "must end a word"},
    {"owner:j*n", 7, "'*' at 7 must come at the end"},
    {"owner:\"jo* smith\"", 9, "must come at the end"},
    {"owner:\"john *\"", 12, "must end a word"},
    {"owner:x?", 7, "'?' at 7 matches one digit and works only in number patterns"},
    {"owner:\"--\"", 6, "owner value at 6 has no letters or digits"},
    {"bank:\"\"", 5, "bank value at 5 has no letters or digits"},
    /* cvv, leakId */
    {"cvv:12", 4, "cvv at 4 must be 3 or 4 digits, not '12'"},
    {"cvv:12345", 4, "must be 3 or 4 digits"},
    {"cvv:12a", 4, "must be 3 or 4 digits"},
    {"cvv:12*", 6, "wildcard '*' at 6 is not supported on cvv"},
    {"leakId:a*", 8, "wildcard '*' at 8 is not supported on leakId"},
    {"leakId:\"\"", 7, "leakId at 7 is empty"},
    /* dates and ranges */
    {"createdAt:2020-02-30", 10, "'2020-02-30' at 10 is not a date: createdAt takes"},
    {"createdAt:[2020-01-32 TO *]", 11, "'2020-01-32' at 11 is not a date"},
    {"createdAt:[2020-01-01 TO 2020-13-01]", 25, "'2020-13-01' at 25 is not a date"},
    {"createdAt:\"2020-01-02 24:00:00\"", 10, "is not a date"},
    {"createdAt:2020*", 10, "is not a date"},
    {"expireDate:\"2020-01-01 10:00:00\"", 11, "expireDate takes YYYY-MM-DD"},
    {"expireDate:2025-01", 11, "'2025-01' at 11 is not a date"},
    {"createdAt:[2021-01-01 TO 2020-01-01]", 11,
     "range at 11 starts after it ends: 2021-01-01 is later than 2020-01-01"},
    {"expireDate:{2025-01-02 TO 2025-01-01]", 12, "starts after it ends"},
    {"owner:[a TO b]", 6, "range at 6 on owner: ranges work only on createdAt and expireDate"},
    {"cvv:[100 TO 200]", 4, "ranges work only on createdAt and expireDate"},
    {"createdAt:[2020-01-01 to *]", 22, "expected TO at 22"},
    {"createdAt:[2020-01-01 TO *", 26, "expected ']' or '}' at 26 to close the range opened at 10"},
    {"createdAt:[TO *]", 11, "expected a date or * to start the range at 11"},
    {"createdAt:[* TO ]", 16, "expected a date or * to end the range at 16"},
    /* control bytes */
    {"owner:a\x01", 7, "control character \\x01 at 7 is not allowed"},
    {"owner:\"a\x7f\"", 8, "control character \\x7f at 8"},
};

static char *parse_to_string(const char *text, size_t len, bd_query_error *err, bd_result *r)
{
    bd_query *q = NULL;
    *r = bd_query_parse(text, len, &q, err);
    if (*r != BD_OK)
        return NULL;
    bd_buf b;
    bd_buf_init(&b, 1 << 20);
    if (bd_query_to_string(q, &b) != BD_OK) {
        bd_buf_free(&b);
        bd_query_free(q);
        return NULL;
    }
    bd_query_free(q);
    return b.data;
}

static void check_ok(const char *text, size_t len, const char *want)
{
    bd_query_error err;
    bd_result r;
    char *got = parse_to_string(text, len, &err, &r);
    if (r != BD_OK)
        TEST_FAIL("query [%s] refused at %d: %s; want %s", text, err.pos, err.message, want);
    else
        CHECK_STR(got, want);
    free(got);
}

static void check_err(const char *text, size_t len, int pos, const char *fragment)
{
    bd_query_error err;
    bd_result r;
    char *got = parse_to_string(text, len, &err, &r);
    if (r != BD_ERR_INVALID) {
        TEST_FAIL("query [%.60s] gave %s (%s), want an error at %d", text, bd_result_str(r),
                  got ? got : "", pos);
    } else {
        if (err.pos != pos)
            TEST_FAIL("query [%.60s]: error at %d (%s), want at %d", text, err.pos, err.message,
                      pos);
        if (!strstr(err.message, fragment))
            TEST_FAIL("query [%.60s]: message \"%s\" lacks \"%s\"", text, err.message, fragment);
        for (const char *m = err.message; *m; m++)
            if ((unsigned char)*m < 0x20 || (unsigned char)*m > 0x7e) {
                TEST_FAIL("query [%.60s]: message is not printable ASCII", text);
                break;
            }
    }
    free(got);
}

static int rows_run;

TEST(test_query_valid_rows_give_their_canonical_tree)
{
    for (size_t i = 0; i < sizeof OK_ROWS / sizeof OK_ROWS[0]; i++, rows_run++)
        check_ok(OK_ROWS[i].query, strlen(OK_ROWS[i].query), OK_ROWS[i].want);
}

TEST(test_query_invalid_rows_give_position_and_reason)
{
    for (size_t i = 0; i < sizeof ERR_ROWS / sizeof ERR_ROWS[0]; i++, rows_run++)
        check_err(ERR_ROWS[i].query, strlen(ERR_ROWS[i].query), ERR_ROWS[i].pos,
                  ERR_ROWS[i].fragment);
}

TEST(test_query_nul_byte_is_refused_at_its_position)
{
    static const char text[] = "owner:bob\0 OR owner:alice";
    check_err(text, sizeof text - 1, 9, "control character \\x00 at 9 is not allowed");
    static const char quoted[] = "owner:\"a\0b\"";
    check_err(quoted, sizeof quoted - 1, 8, "control character \\x00 at 8");
    rows_run += 2;
}

TEST(test_query_length_is_read_not_nul_terminator)
{
    /* Only the first 10 bytes belong to the query. */
    check_ok("owner:john OR garbage", 10, "(owner \"john\")");
    check_ok(NULL, 0, "(ALL)");
    rows_run += 2;
}

/* owner:a padded with spaces to exactly n bytes. */
static char *padded(size_t n)
{
    char *s = malloc(n + 1);
    memset(s, ' ', n);
    memcpy(s, "owner:a", 7);
    s[n] = '\0';
    return s;
}

TEST(test_query_length_limit_is_4096_bytes)
{
    char *at = padded(4096), *over = padded(4097);
    check_ok(at, 4096, "(owner \"a\")");
    check_err(over, 4097, 4096, "query is longer than 4096 bytes at 4096 (it has 4097)");
    free(at);
    free(over);
    rows_run += 2;
}

/* depth levels of parentheses around owner:a. */
static char *nested(int depth)
{
    bd_buf b;
    bd_buf_init(&b, 1 << 16);
    for (int i = 0; i < depth; i++)
        bd_buf_append_char(&b, '(');
    bd_buf_append_str(&b, "owner:a");
    for (int i = 0; i < depth; i++)
        bd_buf_append_char(&b, ')');
    return b.data;
}

TEST(test_query_nesting_limit_is_32)
{
    char *at = nested(32), *over = nested(33);
    check_ok(at, strlen(at), "(owner \"a\")");
    check_err(over, strlen(over), 32, "parentheses nested deeper than 32 at 32");
    free(at);
    free(over);
    rows_run += 2;
}

/* n terms "cvv:100 OR cvv:101 ..." and the canonical form of the first n. */
static char *terms(int n, const char *op, char **want)
{
    bd_buf b, w;
    bd_buf_init(&b, 1 << 16);
    bd_buf_init(&w, 1 << 16);
    bd_buf_append_str(&w, n > 1 ? (strcmp(op, " OR ") == 0 ? "(OR" : "(AND") : "");
    for (int i = 0; i < n; i++) {
        bd_buf_printf(&b, "%scvv:%d", i ? op : "", 100 + i);
        bd_buf_printf(&w, "%s(cvv \"%d\")", n > 1 ? " " : "", 100 + i);
    }
    bd_buf_append_str(&w, n > 1 ? ")" : "");
    *want = w.data;
    return b.data;
}

TEST(test_query_term_limit_is_64)
{
    char *want, *want_over;
    char *at = terms(64, " OR ", &want), *over = terms(65, " ", &want_over);
    check_ok(at, strlen(at), want);
    /* The 65th term starts after 64 terms of 7 bytes and 64 separating spaces. */
    check_err(over, strlen(over), 64 * 8, "query has more than 64 terms at 512");
    free(at);
    free(over);
    free(want);
    free(want_over);
    rows_run += 2;
}

TEST(test_query_tree_is_readable_by_a_planner)
{
    bd_query *q = NULL;
    bd_query_error err;
    const char *text = "owner:\"John Sm*\" NOT 411111*1111 expireDate:{2025-01-01 TO *]";
    CHECK_INT(bd_query_parse(text, strlen(text), &q, &err), BD_OK);
    if (!q)
        return;
    const bd_query_node *root = bd_query_root(q);
    CHECK_INT(root->kind, BD_QUERY_AND);
    CHECK_INT(root->n_children, 3);
    const bd_query_node *owner = root->children[0];
    CHECK_INT(owner->kind, BD_QUERY_WORD);
    CHECK_INT(owner->field, BD_QUERY_FIELD_OWNER);
    CHECK_INT(owner->pos, 0);
    CHECK_INT(owner->n_words, 2);
    CHECK_STR(owner->words[1].ptr, "sm");
    CHECK_INT(owner->words[1].len, 2);
    CHECK(owner->prefix);
    const bd_query_node *not = root->children[1];
    CHECK_INT(not ->kind, BD_QUERY_NOT);
    CHECK_INT(not ->pos, 17);
    CHECK_INT(not ->n_children, 1);
    const bd_query_node *num = not ->children[0];
    CHECK_INT(num->kind, BD_QUERY_NUMBER_PATTERN);
    CHECK_STR(num->bin, "411111");
    CHECK_STR(num->last4, "1111");
    CHECK_INT(num->length, -1);
    CHECK_INT(num->min_length, 10);
    const bd_query_node *exp = root->children[2];
    CHECK_INT(exp->kind, BD_QUERY_DATE_RANGE);
    CHECK_INT(exp->field, BD_QUERY_FIELD_EXPIRE_DATE);
    CHECK(exp->has_lower);
    CHECK(!exp->has_upper);
    CHECK(!exp->lower_inclusive);
    CHECK(exp->upper_inclusive);
    CHECK_STR(exp->lower, "2025-01-01");
    bd_query_free(q);
}

TEST(test_query_exact_values_are_normalised_for_binding)
{
    bd_query *q = NULL;
    const char *text = "owner:x Hash:" HASH64_UPPER;
    CHECK_INT(bd_query_parse(text, strlen(text), &q, NULL), BD_OK);
    if (!q)
        return;
    const bd_query_node *root = bd_query_root(q);
    CHECK_INT(root->n_children, 2);
    CHECK_INT(root->children[1]->kind, BD_QUERY_HASH);
    CHECK_STR(root->children[1]->value.ptr, HASH64_LOWER);
    CHECK_INT(root->children[1]->value.len, 64);
    bd_query_free(q);
    text = "owner:x \"4111 1111 1111 1111\"";
    CHECK_INT(bd_query_parse(text, strlen(text), &q, NULL), BD_OK);
    if (!q)
        return;
    root = bd_query_root(q);
    CHECK_INT(root->children[1]->kind, BD_QUERY_NUMBER_EXACT);
    CHECK_STR(root->children[1]->value.ptr, "4111111111111111");
    CHECK_INT(root->children[1]->value.len, 16);
    bd_query_free(q);
}

static int exact_terms(const char *text)
{
    bd_query *q = NULL;
    if (bd_query_parse(text, strlen(text), &q, NULL) != BD_OK)
        return -1;
    int n = bd_query_exact_terms(q);
    bd_query_free(q);
    return n;
}

TEST(test_query_counts_its_exact_lookups_anywhere_in_the_tree)
{
    CHECK_INT(BD_QUERY_MAX_EXACT, 1);
    CHECK_INT(exact_terms(""), 0);
    CHECK_INT(exact_terms("411111*1111 OR 411111XXXXXX1111 OR cvv:123"), 0);
    CHECK_INT(exact_terms("4111111111111111"), 1);
    CHECK_INT(exact_terms("hash:" HASH64_UPPER), 1);
    CHECK_INT(exact_terms("owner:a AND NOT (cvv:123 OR 4111111111111111)"), 1);
    CHECK_INT(exact_terms("NOT NOT 4111111111111111"), 1);
    CHECK_INT(exact_terms("4111111111111111 OR 4111111111111112"), -1);
}

TEST(test_query_error_leaves_out_null)
{
    bd_query *q = (bd_query *)&q;
    bd_query_error err;
    CHECK_INT(bd_query_parse("foo:bar", 7, &q, &err), BD_ERR_INVALID);
    CHECK(q == NULL);
    CHECK_INT(bd_query_parse("foo:bar", 7, &q, NULL), BD_ERR_INVALID);
    bd_query_free(NULL);
}

TEST(test_query_field_names_are_canonical)
{
    CHECK_STR(bd_query_field_name(BD_QUERY_FIELD_HASH), "Hash");
    CHECK_STR(bd_query_field_name(BD_QUERY_FIELD_CREATED_AT), "createdAt");
    CHECK_STR(bd_query_field_name(BD_QUERY_FIELD_LEAK_ID), "leakId");
    CHECK_STR(bd_query_field_name(BD_QUERY_FIELD_NONE), "");
}

int main(void)
{
    RUN(test_query_valid_rows_give_their_canonical_tree);
    RUN(test_query_invalid_rows_give_position_and_reason);
    RUN(test_query_nul_byte_is_refused_at_its_position);
    RUN(test_query_length_is_read_not_nul_terminator);
    RUN(test_query_length_limit_is_4096_bytes);
    RUN(test_query_nesting_limit_is_32);
    RUN(test_query_term_limit_is_64);
    RUN(test_query_tree_is_readable_by_a_planner);
    RUN(test_query_exact_values_are_normalised_for_binding);
    RUN(test_query_counts_its_exact_lookups_anywhere_in_the_tree);
    RUN(test_query_error_leaves_out_null);
    RUN(test_query_field_names_are_canonical);
    printf("%d query rows\n", rows_run);
    return TEST_EXIT();
}
