/* Recursive-descent parser for the card query language:
 *   expr := or;  or := and (OR and)*;  and := not ((AND)? not)*;  not := NOT not | primary;
 *   primary := '(' expr ')' | [field ':'] value | field ':' range
 * Recursion happens only through parentheses, so it is at most BD_QUERY_MAX_DEPTH deep; runs
 * of NOT are counted in a loop. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "query/query_impl.h"

typedef struct {
    bd_query *q;
    bd_query_error *err;
    query_token cur;  /* the token being looked at */
    query_token prev; /* the token consumed before it, for "expected ... after X" */
    int terms;
    query_lexer lx;
} parser;

static bd_result advance(parser *p, query_lex_mode mode)
{
    p->prev = p->cur;
    return query_lex_next(&p->lx, mode, &p->cur, p->err);
}

static bd_result too_complex(parser *p, int pos)
{
    return query_fail(p->err, pos, "query is too complex at %d; split it", pos);
}

/* How a token reads in a message: its own text quoted, or "the end of the query". */
static void token_text(const parser *p, const query_token *t, char *out, size_t cap)
{
    char shown[104];
    if (t->kind == TOK_END) {
        snprintf(out, cap, "the end of the query");
        return;
    }
    query_describe(shown, sizeof shown, p->lx.src + t->pos, (size_t)(t->end - t->pos));
    snprintf(out, cap, "'%s'", shown);
}

static bd_result expected_term(parser *p)
{
    char found[110], after[110];
    token_text(p, &p->cur, found, sizeof found);
    query_tok_kind k = p->prev.kind;
    if (k == TOK_AND || k == TOK_OR || k == TOK_NOT || k == TOK_LPAREN) {
        token_text(p, &p->prev, after, sizeof after);
        return query_fail(p->err, p->cur.pos, "expected a term after %s at %d, found %s", after,
                          p->cur.pos, found);
    }
    return query_fail(p->err, p->cur.pos, "expected a term at %d, found %s", p->cur.pos, found);
}

/* A token that cannot appear where it is: explains what it is for. */
static bd_result unexpected(parser *p)
{
    int at = p->cur.pos;
    switch (p->cur.kind) {
    case TOK_RPAREN:
        return query_fail(p->err, at, "unbalanced ')' at %d: there is no '(' to close", at);
    case TOK_COLON:
        return query_fail(p->err, at, "':' at %d must follow a field name, e.g. owner:john", at);
    case TOK_RANGE_OPEN:
        return query_fail(p->err, at,
                          "'%c' at %d: a range must follow createdAt: or expireDate:, e.g. "
                          "expireDate:[2025-01-01 TO *]",
                          p->cur.ch, at);
    case TOK_RANGE_CLOSE:
        return query_fail(p->err, at, "'%c' at %d closes no range", p->cur.ch, at);
    default:
        return expected_term(p);
    }
}

static bool field_is(const char *name, const char *s, size_t n)
{
    return strlen(name) == n && strncasecmp(name, s, n) == 0;
}

static bd_result lookup_field(parser *p, int pos, bd_query_field *out)
{
    static const bd_query_field fields[] = {
        BD_QUERY_FIELD_CREATED_AT,  BD_QUERY_FIELD_NUMBER,  BD_QUERY_FIELD_HASH,
        BD_QUERY_FIELD_EXPIRE_DATE, BD_QUERY_FIELD_CVV,     BD_QUERY_FIELD_OWNER,
        BD_QUERY_FIELD_BANK,        BD_QUERY_FIELD_LEAK_ID,
    };
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        if (field_is(bd_query_field_name(fields[i]), p->lx.val, p->lx.vlen)) {
            *out = fields[i];
            return BD_OK;
        }
    char shown[104];
    query_describe(shown, sizeof shown, p->lx.val, p->lx.vlen);
    return query_fail(p->err, pos,
                      "field '%s' at %d is not searchable; fields are createdAt, number, Hash, "
                      "expireDate, cvv, owner, bank, leakId",
                      shown, pos);
}

static bool is_bare_to(const parser *p)
{
    return p->cur.kind == TOK_WORD && !p->cur.quoted && !p->cur.escaped && p->lx.vlen == 2 &&
           memcmp(p->lx.val, "TO", 2) == 0;
}

/* At the opening bracket of field:[a TO b]; leaves the closing bracket as the current token. */
static bd_result parse_range(parser *p, bd_query_field field, int term_pos, int *out)
{
    const char *name = bd_query_field_name(field);
    char open_ch = p->cur.ch;
    int open_pos = p->cur.pos;
    if (field != BD_QUERY_FIELD_CREATED_AT && field != BD_QUERY_FIELD_EXPIRE_DATE)
        return query_fail(p->err, open_pos,
                          "range at %d on %s: ranges work only on createdAt and expireDate",
                          open_pos, name);
    query_bound lo, hi;
    bd_result r = advance(p, LEX_VALUE);
    if (r != BD_OK)
        return r;
    if (p->cur.kind != TOK_WORD || is_bare_to(p))
        return query_fail(p->err, p->cur.pos,
                          "expected a date or * to start the range at %d, e.g. %s:[2020-01-01 "
                          "TO *]",
                          p->cur.pos, name);
    if ((r = query_range_bound(&p->lx, field, p->cur.pos, &lo, p->err)) != BD_OK)
        return r;
    if ((r = advance(p, LEX_VALUE)) != BD_OK)
        return r;
    if (!is_bare_to(p))
        return query_fail(p->err, p->cur.pos,
                          "expected TO at %d: a range is [from TO to], TO in upper case",
                          p->cur.pos);
    if ((r = advance(p, LEX_VALUE)) != BD_OK)
        return r;
    if (p->cur.kind != TOK_WORD)
        return query_fail(p->err, p->cur.pos,
                          "expected a date or * to end the range at %d, e.g. %s:[2020-01-01 "
                          "TO *]",
                          p->cur.pos, name);
    if ((r = query_range_bound(&p->lx, field, p->cur.pos, &hi, p->err)) != BD_OK)
        return r;
    if ((r = advance(p, LEX_VALUE)) != BD_OK)
        return r;
    if (p->cur.kind != TOK_RANGE_CLOSE)
        return query_fail(p->err, p->cur.pos,
                          "expected ']' or '}' at %d to close the range opened at %d", p->cur.pos,
                          open_pos);
    return query_range_leaf(p->q, field, term_pos, &lo, open_ch, &hi, p->cur.ch, out, p->err);
}

/* Counts the leaf just made when it is a full number or a Hash: and refuses one too many.
 * Every such term tests one guess at a hidden number, NOT included (its count against the
 * total tells the same), so ORing candidates for one masked card would recover it. */
static bd_result count_exact(parser *p, int node, int term_pos)
{
    bd_query_kind k = p->q->nodes[node].kind;
    if (k != BD_QUERY_NUMBER_EXACT && k != BD_QUERY_HASH)
        return BD_OK;
    if (++p->q->n_exact <= BD_QUERY_MAX_EXACT)
        return BD_OK;
    return query_fail(p->err, term_pos,
                      "one exact card lookup too many at %d: a query may hold at most %d full "
                      "card number or Hash: term; send one query per card",
                      term_pos, BD_QUERY_MAX_EXACT);
}

/* After a value leaf at term_pos: counts it and moves past it. */
static bd_result end_term(parser *p, bd_result r, int node, int term_pos)
{
    if (r == BD_OK)
        r = count_exact(p, node, term_pos);
    return r == BD_OK ? advance(p, LEX_OPERATOR) : r;
}

/* At a WORD: [field ':'] value or field ':' range. */
static bd_result parse_term(parser *p, int *out)
{
    int term_pos = p->cur.pos;
    if (p->terms >= BD_QUERY_MAX_TERMS)
        return query_fail(p->err, term_pos,
                          "query has more than %d terms at %d; narrow or split it",
                          BD_QUERY_MAX_TERMS, term_pos);
    p->terms++;
    bd_result r;
    if (!query_lex_take_colon(&p->lx)) {
        r = query_value_leaf(p->q, &p->lx, BD_QUERY_FIELD_NUMBER, false, p->cur.quoted, term_pos,
                             term_pos, out, p->err);
        return end_term(p, r, *out, term_pos);
    }
    if (p->cur.quoted)
        return query_fail(p->err, term_pos,
                          "field name at %d is quoted; quote the value instead: "
                          "owner:\"john smith\"",
                          term_pos);
    bd_query_field field = BD_QUERY_FIELD_NONE;
    if ((r = lookup_field(p, term_pos, &field)) != BD_OK)
        return r;
    const char *name = bd_query_field_name(field);
    if ((r = advance(p, LEX_VALUE)) != BD_OK)
        return r;
    if (p->cur.kind == TOK_RANGE_OPEN)
        r = parse_range(p, field, term_pos, out);
    else if (p->cur.kind == TOK_WORD)
        r = query_value_leaf(p->q, &p->lx, field, true, p->cur.quoted, term_pos, p->cur.pos, out,
                             p->err);
    else if (p->cur.kind == TOK_LPAREN)
        return query_fail(p->err, p->cur.pos,
                          "expected a value after '%s:' at %d; to search several values write "
                          "%s:a OR %s:b",
                          name, p->cur.pos, name, name);
    else
        return query_fail(p->err, p->cur.pos, "expected a value after '%s:' at %d", name,
                          p->cur.pos);
    return end_term(p, r, *out, term_pos);
}

static bd_result parse_or(parser *p, int depth, int *out);

static bd_result parse_primary(parser *p, int depth, int *out)
{
    if (p->cur.kind == TOK_WORD)
        return parse_term(p, out);
    if (p->cur.kind != TOK_LPAREN)
        return p->cur.kind == TOK_COLON || p->cur.kind == TOK_RANGE_OPEN ||
                       p->cur.kind == TOK_RANGE_CLOSE
                   ? unexpected(p)
                   : expected_term(p);
    int open_pos = p->cur.pos;
    if (depth >= BD_QUERY_MAX_DEPTH)
        return query_fail(p->err, open_pos,
                          "parentheses nested deeper than %d at %d; simplify the query",
                          BD_QUERY_MAX_DEPTH, open_pos);
    bd_result r = advance(p, LEX_OPERATOR);
    if (r == BD_OK)
        r = parse_or(p, depth + 1, out);
    if (r != BD_OK)
        return r;
    if (p->cur.kind == TOK_END)
        return query_fail(p->err, p->cur.pos, "expected ')' at %d to close '(' at %d", p->cur.pos,
                          open_pos);
    if (p->cur.kind != TOK_RPAREN)
        return unexpected(p);
    return advance(p, LEX_OPERATOR);
}

static bd_result parse_not(parser *p, int depth, int *out)
{
    int nots = 0, pos = p->cur.pos;
    bd_result r = BD_OK;
    while (r == BD_OK && p->cur.kind == TOK_NOT) {
        nots++;
        r = advance(p, LEX_OPERATOR);
    }
    if (r == BD_OK)
        r = parse_primary(p, depth, out);
    if (r != BD_OK || nots % 2 == 0)
        return r;
    if ((*out = query_negate(p->q, *out, pos)) < 0)
        return too_complex(p, pos);
    return BD_OK;
}

static bool starts_term(query_tok_kind k)
{
    return k == TOK_WORD || k == TOK_LPAREN || k == TOK_NOT;
}

static bd_result parse_and(parser *p, int depth, int *out)
{
    bd_result r = parse_not(p, depth, out);
    while (r == BD_OK && (p->cur.kind == TOK_AND || starts_term(p->cur.kind))) {
        if (p->cur.kind == TOK_AND && (r = advance(p, LEX_OPERATOR)) != BD_OK)
            return r;
        int pos = p->cur.pos, right;
        if ((r = parse_not(p, depth, &right)) != BD_OK)
            return r;
        if ((*out = query_combine(p->q, BD_QUERY_AND, *out, right)) < 0)
            return too_complex(p, pos);
    }
    return r;
}

static bd_result parse_or(parser *p, int depth, int *out)
{
    bd_result r = parse_and(p, depth, out);
    while (r == BD_OK && p->cur.kind == TOK_OR) {
        int pos = p->cur.pos, right;
        if ((r = advance(p, LEX_OPERATOR)) != BD_OK)
            return r;
        if ((r = parse_and(p, depth, &right)) != BD_OK)
            return r;
        if ((*out = query_combine(p->q, BD_QUERY_OR, *out, right)) < 0)
            return too_complex(p, pos);
    }
    return r;
}

static bd_result parse_query(parser *p)
{
    bd_result r = advance(p, LEX_OPERATOR);
    if (r != BD_OK)
        return r;
    if (p->cur.kind == TOK_END) { /* empty or white space only */
        p->q->root = query_node_new(p->q, BD_QUERY_ALL, BD_QUERY_FIELD_NONE, 0);
        return BD_OK;
    }
    if ((r = parse_or(p, 0, &p->q->root)) != BD_OK)
        return r;
    return p->cur.kind == TOK_END ? BD_OK : unexpected(p);
}

bd_result bd_query_parse(const char *text, size_t len, bd_query **out, bd_query_error *err)
{
    bd_query_error spare;
    if (!err)
        err = &spare;
    *out = NULL;
    err->pos = 0;
    err->message[0] = '\0';
    if (!text)
        len = 0;
    if (len > BD_QUERY_MAX_BYTES)
        return query_fail(err, BD_QUERY_MAX_BYTES,
                          "query is longer than %d bytes at %d (it has %zu); narrow it",
                          BD_QUERY_MAX_BYTES, BD_QUERY_MAX_BYTES, len);
    int ctl = query_find_control(text, len);
    if (ctl >= 0) {
        char shown[8];
        query_describe(shown, sizeof shown, text + ctl, 1);
        return query_fail(err, ctl, "control character %s at %d is not allowed in a query", shown,
                          ctl);
    }
    parser *p = malloc(sizeof *p);
    bd_query *q = query_alloc(len);
    bd_result r = BD_ERR_NOMEM;
    if (!p || !q) {
        query_fail(err, 0, "out of memory");
        goto out_free;
    }
    /* field by field: the lexer's value buffers (16 KiB) are written before they are read */
    p->q = q;
    p->err = err;
    p->cur = p->prev = (query_token){.kind = TOK_END};
    p->terms = 0;
    query_lex_init(&p->lx, text ? text : "", len);
    if ((r = parse_query(p)) != BD_OK)
        goto out_free;
    query_finish(q);
    *out = q;
    q = NULL;
out_free:
    bd_query_free(q);
    free(p);
    return r;
}
