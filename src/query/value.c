/* Field values: the per-field checks that turn one decoded word into a leaf node (number
 * patterns and the hidden-digit rule, Hash, owner/bank words, cvv, leakId, dates and ranges). */
#include <stdio.h>
#include <string.h>

#include "core/date.h"
#include "query/query_impl.h"

#define HIDDEN_HINT "only the first 6 and last 4 digits of a card number can be searched"

static bool is_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

static bool is_word_byte(unsigned char c)
{
    return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80;
}

static int vpos(const query_lexer *lx, size_t i)
{
    return lx->vpos[i];
}

/* The first unescaped '*' or '?' of the value, or -1. */
static int first_wildcard(const query_lexer *lx)
{
    for (size_t i = 0; i < lx->vlen; i++)
        if (lx->wild[i])
            return (int)i;
    return -1;
}

static int new_leaf(bd_query *q, bd_query_kind kind, bd_query_field field, int pos,
                    bd_query_error *err, bd_result *r)
{
    int n = query_node_new(q, kind, field, pos);
    *r = n < 0 ? query_fail(err, pos, "query is too complex at %d; split it", pos) : BD_OK;
    return n;
}

static bd_result add_value(bd_query *q, int n, const char *p, size_t len, bd_query_error *err)
{
    char *s = query_text_add(q, p, len);
    if (!s)
        return query_fail(err, q->nodes[n].pos, "query is too complex at %d; split it",
                          q->nodes[n].pos);
    q->nodes[n].value = (bd_slice){s, len};
    return BD_OK;
}

/* ---- number ---- */

enum { ITEM_DIGIT, ITEM_ONE, ITEM_STAR };

typedef struct {
    int kind;
    char c; /* the digit, or '?' */
    int pos;
} number_item;

/* Digit positions are at most 19 and stars are collapsed, so 19 digits and 20 stars fit. */
#define MAX_ITEMS 40

static bd_result hidden_digit(bd_query_error *err, int pos, int ordinal, bool from_end)
{
    return query_fail(err, pos, "pattern pins hidden digit %d%s at %d: " HIDDEN_HINT, ordinal,
                      from_end ? " from the end" : "", pos);
}

static bd_result number_leaf(bd_query *q, const query_lexer *lx, bool fielded, bool quoted,
                             int term_pos, int vp, int *out, bd_query_error *err)
{
    number_item items[MAX_ITEMS];
    int n = 0, positions = 0, stars = 0;
    bool all_digits = true;
    char shown[104];
    query_describe(shown, sizeof shown, lx->val, lx->vlen);

    for (size_t i = 0; i < lx->vlen; i++) {
        unsigned char c = (unsigned char)lx->val[i];
        int at = vpos(lx, i);
        if (c == ' ' || c == '-') {
            if (!quoted)
                return query_fail(err, at,
                                  "'%c' at %d: spaces and dashes are allowed only in a quoted "
                                  "number, e.g. \"4111 1111 1111 1111\"",
                                  c, at);
            continue;
        }
        if (c == '*' && lx->wild[i]) {
            if (n == 0 || items[n - 1].kind != ITEM_STAR) {
                items[n++] = (number_item){ITEM_STAR, '*', at};
                stars++;
            }
            continue;
        }
        number_item it;
        if (is_digit(c)) {
            it = (number_item){ITEM_DIGIT, (char)c, at};
        } else if (c == 'X' || c == 'x' || (c == '?' && lx->wild[i])) {
            it = (number_item){ITEM_ONE, '?', at};
            all_digits = false;
        } else {
            char ch[8];
            query_describe(ch, sizeof ch, (const char *)&c, 1);
            if (fielded)
                return query_fail(err, at,
                                  "'%s' at %d is not a digit, X, ? or *: number patterns use "
                                  "digits, X or ? (one digit) and * (any digits)",
                                  ch, at);
            return query_fail(err, at,
                              "'%s' at %d is not a digit, X, ? or *: a term without a field "
                              "searches number; write field:value (e.g. owner:%s), and "
                              "operators in upper case (AND OR NOT)",
                              ch, at, shown);
        }
        if (++positions > 19)
            return query_fail(err, at,
                              "number pattern has more than 19 digit positions at %d; card "
                              "numbers have 12 to 19 digits",
                              at);
        items[n++] = it;
    }

    bd_result r;
    if (positions == 0) {
        if (stars == 0)
            return query_fail(err, vp, "empty card number at %d", vp);
        *out = new_leaf(q, BD_QUERY_ALL, BD_QUERY_FIELD_NONE, term_pos, err, &r);
        return r;
    }

    int len = positions;
    if (stars == 0) {
        if (len < 12) {
            if (all_digits)
                return query_fail(err, vp,
                                  "'%s' at %d is not a whole card number (12 to 19 digits); to "
                                  "search by its first digits write %s*",
                                  shown, vp, shown);
            return query_fail(err, vp,
                              "pattern '%s' at %d has no * so it must cover a whole card number "
                              "(12 to 19 digits); add * to match any length, e.g. %s*",
                              shown, vp, shown);
        }
        if (all_digits) {
            char digits[20];
            for (int i = 0; i < n; i++)
                digits[i] = items[i].c;
            *out = new_leaf(q, BD_QUERY_NUMBER_EXACT, BD_QUERY_FIELD_NUMBER, term_pos, err, &r);
            return r == BD_OK ? add_value(q, *out, digits, (size_t)n, err) : r;
        }
    }

    /* Without a star the length is fixed and digit i shows when i < 6 or i >= len - 4. With
     * stars, digits before the first show when among the first 6, digits after the last when
     * among the last 4, and digits between two stars have no known place. */
    int bin_len, last_from;
    if (stars == 0) {
        for (int i = 6; i < len - 4; i++)
            if (items[i].kind == ITEM_DIGIT)
                return hidden_digit(err, items[i].pos, i + 1, false);
        bin_len = 6;
        last_from = len - 4;
    } else {
        int fs = -1, ls = -1;
        for (int i = 0; i < n; i++)
            if (items[i].kind == ITEM_STAR) {
                if (fs < 0)
                    fs = i;
                ls = i;
            }
        for (int i = 6; i < fs; i++)
            if (items[i].kind == ITEM_DIGIT)
                return hidden_digit(err, items[i].pos, i + 1, false);
        for (int i = fs + 1; i < ls; i++)
            if (items[i].kind == ITEM_DIGIT)
                return query_fail(err, items[i].pos,
                                  "pattern pins a digit between two * at %d: its place in the "
                                  "number is unknown; " HIDDEN_HINT,
                                  items[i].pos);
        for (int i = ls + 1; i < n; i++) {
            int from_end = n - 1 - i;
            if (from_end >= 4 && items[i].kind == ITEM_DIGIT)
                return hidden_digit(err, items[i].pos, from_end + 1, true);
        }
        bin_len = fs < 6 ? fs : 6;
        int suffix = n - 1 - ls;
        last_from = n - (suffix < 4 ? suffix : 4);
    }

    *out = new_leaf(q, BD_QUERY_NUMBER_PATTERN, BD_QUERY_FIELD_NUMBER, term_pos, err, &r);
    if (r != BD_OK)
        return r;
    bd_query_node *node = &q->nodes[*out];
    node->length = stars == 0 ? len : -1;
    node->min_length = len;
    for (int k = 0; k < bin_len; k++)
        node->bin[k] = items[k].c;
    for (int k = last_from; k < n; k++)
        node->last4[k - last_from] = items[k].c;
    /* Trim what constrains nothing: trailing '?' of bin, leading '?' of last4. */
    size_t bl = strlen(node->bin);
    while (bl > 0 && node->bin[bl - 1] == '?')
        node->bin[--bl] = '\0';
    size_t skip = 0, ll = strlen(node->last4);
    while (skip < ll && node->last4[skip] == '?')
        skip++;
    memmove(node->last4, node->last4 + skip, ll - skip + 1);
    return BD_OK;
}

/* ---- exact fields ---- */

static bd_result no_wildcards(const query_lexer *lx, const char *field, bd_query_error *err)
{
    int w = first_wildcard(lx);
    if (w < 0)
        return BD_OK;
    int at = vpos(lx, (size_t)w);
    return query_fail(err, at,
                      "wildcard '%c' at %d is not supported on %s, which matches exact values; "
                      "write \\%c for the character itself",
                      lx->val[w], at, field, lx->val[w]);
}

static bd_result hash_leaf(bd_query *q, const query_lexer *lx, int term_pos, int vp, int *out,
                           bd_query_error *err)
{
    bd_result r = no_wildcards(lx, "Hash", err);
    if (r != BD_OK)
        return r;
    char hex[64];
    for (size_t i = 0; i < lx->vlen; i++) {
        unsigned char c = (unsigned char)lx->val[i];
        if (c >= 'A' && c <= 'F')
            c = (unsigned char)(c - 'A' + 'a');
        if (!is_digit(c) && !(c >= 'a' && c <= 'f')) {
            char ch[8];
            query_describe(ch, sizeof ch, lx->val + i, 1);
            return query_fail(err, vpos(lx, i),
                              "'%s' at %d is not a hexadecimal digit: Hash is 64 hexadecimal "
                              "digits (SHA-256 of the card number)",
                              ch, vpos(lx, i));
        }
        if (i < 64)
            hex[i] = (char)c;
    }
    if (lx->vlen != 64)
        return query_fail(err, vp,
                          "Hash at %d has %zu hexadecimal digits; it needs exactly 64 "
                          "(SHA-256 of the card number)",
                          vp, lx->vlen);
    *out = new_leaf(q, BD_QUERY_HASH, BD_QUERY_FIELD_HASH, term_pos, err, &r);
    return r == BD_OK ? add_value(q, *out, hex, 64, err) : r;
}

static bd_result cvv_leaf(bd_query *q, const query_lexer *lx, int term_pos, int vp, int *out,
                          bd_query_error *err)
{
    bd_result r = no_wildcards(lx, "cvv", err);
    if (r != BD_OK)
        return r;
    bool digits = lx->vlen == 3 || lx->vlen == 4;
    for (size_t i = 0; digits && i < lx->vlen; i++)
        digits = is_digit((unsigned char)lx->val[i]);
    if (!digits) {
        char shown[104];
        query_describe(shown, sizeof shown, lx->val, lx->vlen);
        return query_fail(err, vp, "cvv at %d must be 3 or 4 digits, not '%s'", vp, shown);
    }
    *out = new_leaf(q, BD_QUERY_CVV, BD_QUERY_FIELD_CVV, term_pos, err, &r);
    return r == BD_OK ? add_value(q, *out, lx->val, lx->vlen, err) : r;
}

static bd_result leak_id_leaf(bd_query *q, const query_lexer *lx, int term_pos, int vp, int *out,
                              bd_query_error *err)
{
    bd_result r = no_wildcards(lx, "leakId", err);
    if (r != BD_OK)
        return r;
    if (lx->vlen == 0)
        return query_fail(err, vp, "leakId at %d is empty", vp);
    if (lx->vlen > BD_QUERY_MAX_LEAK_ID)
        return query_fail(err, vp, "leakId at %d is longer than %d bytes", vp,
                          BD_QUERY_MAX_LEAK_ID);
    *out = new_leaf(q, BD_QUERY_LEAK_ID, BD_QUERY_FIELD_LEAK_ID, term_pos, err, &r);
    return r == BD_OK ? add_value(q, *out, lx->val, lx->vlen, err) : r;
}

/* ---- owner, bank ---- */

static bd_result word_leaf(bd_query *q, const query_lexer *lx, bd_query_field field, int term_pos,
                           int vp, int *out, bd_query_error *err)
{
    const char *name = bd_query_field_name(field);
    size_t first_word = q->n_words;
    bool prefix = false;
    size_t i = 0;
    while (i < lx->vlen) {
        unsigned char c = (unsigned char)lx->val[i];
        int at = vpos(lx, i);
        if (lx->wild[i] && c == '?')
            return query_fail(err, at,
                              "'?' at %d matches one digit and works only in number patterns; "
                              "write \\? for a question mark",
                              at);
        if (lx->wild[i] && c == '*') {
            if (i == 0 || !is_word_byte((unsigned char)lx->val[i - 1]))
                return query_fail(err, at,
                                  "'*' at %d must end a word (e.g. %s:jo*): a leading or "
                                  "standalone * is not supported",
                                  at, name);
            for (size_t k = i + 1; k < lx->vlen; k++)
                if (is_word_byte((unsigned char)lx->val[k]) || lx->wild[k])
                    return query_fail(err, at,
                                      "'*' at %d must come at the end: only the last word can "
                                      "be a prefix (e.g. %s:\"john sm*\")",
                                      at, name);
            prefix = true;
            break;
        }
        if (!is_word_byte(c)) {
            i++;
            continue;
        }
        size_t start = i;
        while (i < lx->vlen && is_word_byte((unsigned char)lx->val[i]))
            i++;
        char *w = query_text_add(q, lx->val + start, i - start);
        if (!w || q->n_words >= q->words_cap)
            return query_fail(err, term_pos, "query is too complex at %d; split it", term_pos);
        for (char *p = w; *p; p++)
            if (*p >= 'A' && *p <= 'Z')
                *p = (char)(*p - 'A' + 'a');
        q->words[q->n_words++] = (bd_slice){w, i - start};
    }
    if (q->n_words == first_word)
        return query_fail(err, vp, "%s value at %d has no letters or digits to search for", name,
                          vp);
    bd_result r;
    *out = new_leaf(q, BD_QUERY_WORD, field, term_pos, err, &r);
    if (r != BD_OK)
        return r;
    q->nodes[*out].words = q->words + first_word;
    q->nodes[*out].n_words = q->n_words - first_word;
    q->nodes[*out].prefix = prefix;
    return BD_OK;
}

/* ---- dates ---- */

static bd_result bad_date(bd_query_error *err, bd_query_field field, const query_lexer *lx, int at)
{
    char shown[104];
    query_describe(shown, sizeof shown, lx->val, lx->vlen);
    if (field == BD_QUERY_FIELD_CREATED_AT)
        return query_fail(err, at,
                          "'%s' at %d is not a date: createdAt takes YYYY-MM-DD or "
                          "\"YYYY-MM-DD HH:MM:SS\"",
                          shown, at);
    return query_fail(err, at, "'%s' at %d is not a date: expireDate takes YYYY-MM-DD", shown, at);
}

bd_result query_range_bound(const query_lexer *lx, bd_query_field field, int pos, query_bound *b,
                            bd_query_error *err)
{
    *b = (query_bound){.pos = pos};
    if (lx->vlen == 1 && lx->wild[0] && lx->val[0] == '*') {
        b->open = true;
        return BD_OK;
    }
    bd_slice s = {lx->val, lx->vlen};
    bd_datetime t;
    if (bd_date_parse_iso(s, &t)) {
        b->has_time = false;
    } else if (field == BD_QUERY_FIELD_CREATED_AT && bd_datetime_parse(s, &t)) {
        b->has_time = true;
    } else {
        return bad_date(err, field, lx, b->pos);
    }
    b->y = t.y, b->m = t.m, b->d = t.d, b->hh = t.hh, b->mi = t.mi, b->ss = t.ss;
    memcpy(b->text, lx->val, lx->vlen);
    b->text[lx->vlen] = '\0';
    return BD_OK;
}

/* Writes the normalised form of one end. On createdAt a date is a whole day: it starts at
 * 00:00:00 and ends at 23:59:59, so [d is from the day's start, {d after its end, d] to its
 * end and d} before its start. */
static void bound_text(bd_query_field field, const query_bound *b, bool lower, bool inclusive,
                       char out[20])
{
    bd_datetime t = {b->y, b->m, b->d, b->hh, b->mi, b->ss};
    if (field == BD_QUERY_FIELD_EXPIRE_DATE) {
        bd_date_format_iso(&t, out);
        return;
    }
    if (!b->has_time && lower != inclusive)
        t.hh = 23, t.mi = 59, t.ss = 59;
    bd_datetime_format(&t, out);
}

bd_result query_range_leaf(bd_query *q, bd_query_field field, int term_pos, const query_bound *lo,
                           char open_ch, const query_bound *hi, char close_ch, int *out,
                           bd_query_error *err)
{
    bd_result r;
    *out = new_leaf(q, BD_QUERY_DATE_RANGE, field, term_pos, err, &r);
    if (r != BD_OK)
        return r;
    bd_query_node *n = &q->nodes[*out];
    n->has_lower = !lo->open;
    n->has_upper = !hi->open;
    n->lower_inclusive = lo->open || open_ch == '[';
    n->upper_inclusive = hi->open || close_ch == ']';
    if (n->has_lower)
        bound_text(field, lo, true, n->lower_inclusive, n->lower);
    if (n->has_upper)
        bound_text(field, hi, false, n->upper_inclusive, n->upper);
    if (n->has_lower && n->has_upper && strcmp(n->lower, n->upper) > 0)
        return query_fail(err, lo->pos, "range at %d starts after it ends: %s is later than %s",
                          lo->pos, lo->text, hi->text);
    return BD_OK;
}

static bd_result date_leaf(bd_query *q, const query_lexer *lx, bd_query_field field, int term_pos,
                           int vp, int *out, bd_query_error *err)
{
    query_bound b;
    bd_result r = query_range_bound(lx, field, vp, &b, err);
    if (r != BD_OK)
        return r;
    /* A bare value is the range from it to itself: a whole day on createdAt unless a time was
     * given, one date on expireDate, and "has a value" for '*'. */
    return query_range_leaf(q, field, term_pos, &b, '[', &b, ']', out, err);
}

bd_result query_value_leaf(bd_query *q, const query_lexer *lx, bd_query_field field, bool fielded,
                           bool quoted, int term_pos, int vp, int *out, bd_query_error *err)
{
    switch (field) {
    case BD_QUERY_FIELD_NUMBER:
        return number_leaf(q, lx, fielded, quoted, term_pos, vp, out, err);
    case BD_QUERY_FIELD_HASH:
        return hash_leaf(q, lx, term_pos, vp, out, err);
    case BD_QUERY_FIELD_OWNER:
    case BD_QUERY_FIELD_BANK:
        return word_leaf(q, lx, field, term_pos, vp, out, err);
    case BD_QUERY_FIELD_CVV:
        return cvv_leaf(q, lx, term_pos, vp, out, err);
    case BD_QUERY_FIELD_LEAK_ID:
        return leak_id_leaf(q, lx, term_pos, vp, out, err);
    case BD_QUERY_FIELD_CREATED_AT:
    case BD_QUERY_FIELD_EXPIRE_DATE:
        return date_leaf(q, lx, field, term_pos, vp, out, err);
    case BD_QUERY_FIELD_NONE:
        break;
    }
    return query_fail(err, term_pos, "no field to search at %d", term_pos);
}
