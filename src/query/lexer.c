/* Query tokenizer: splits the query text into operators, brackets and words, decoding quotes
 * and backslash escapes as it goes, and the error helpers the whole module shares. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "query/query_impl.h"

static bool is_space(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static bool is_control(unsigned char c)
{
    return (c < 0x20 && !is_space(c)) || c == 0x7f;
}

bd_result query_fail(bd_query_error *err, int pos, const char *fmt, ...)
{
    err->pos = pos;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    return BD_ERR_INVALID;
}

void query_describe(char *out, size_t cap, const char *p, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    size_t o = 0, shown = n > 24 ? 24 : n;
    for (size_t i = 0; i < shown && o + 5 < cap; i++) {
        unsigned char c = (unsigned char)p[i];
        if (c >= 0x20 && c <= 0x7e) {
            out[o++] = (char)c;
        } else {
            out[o++] = '\\';
            out[o++] = 'x';
            out[o++] = hex[c >> 4];
            out[o++] = hex[c & 15];
        }
    }
    if (shown < n && o + 4 < cap) {
        memcpy(out + o, "...", 3);
        o += 3;
    }
    out[o] = '\0';
}

int query_find_control(const char *src, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (is_control((unsigned char)src[i]))
            return (int)i;
    return -1;
}

void query_lex_init(query_lexer *lx, const char *src, size_t len)
{
    lx->src = src;
    lx->len = len;
    lx->at = 0;
    lx->vlen = 0;
}

static void put(query_lexer *lx, char c, bool wild, size_t from)
{
    /* vlen never exceeds the source length, itself at most BD_QUERY_MAX_BYTES. */
    lx->val[lx->vlen] = c;
    lx->wild[lx->vlen] = wild && (c == '*' || c == '?');
    lx->vpos[lx->vlen] = (uint16_t)from;
    lx->vlen++;
}

/* Two-character operators end a bare word, so owner:bob&&cvv:123 reads as three tokens. */
static bool double_char(const query_lexer *lx, size_t i, char c)
{
    return lx->src[i] == c && i + 1 < lx->len && lx->src[i + 1] == c;
}

static bool ends_bare_word(const query_lexer *lx, size_t i, query_lex_mode mode)
{
    unsigned char c = (unsigned char)lx->src[i];
    if (is_space(c))
        return true;
    switch (c) {
    case '(':
    case ')':
    case '"':
    case '[':
    case ']':
    case '{':
    case '}':
        return true;
    case ':':
        return mode == LEX_OPERATOR;
    case '&':
    case '|':
        return double_char(lx, i, (char)c);
    default:
        return false;
    }
}

static bd_result lex_quoted(query_lexer *lx, query_token *tok, bd_query_error *err)
{
    size_t open = lx->at++;
    tok->kind = TOK_WORD;
    tok->quoted = true;
    for (;;) {
        if (lx->at >= lx->len)
            return query_fail(err, (int)open,
                              "quoted value starting at %d has no closing '\"'; "
                              "write \\\" for a quote inside it",
                              (int)open);
        char c = lx->src[lx->at];
        if (c == '"')
            break;
        if (c == '\\') {
            if (lx->at + 1 >= lx->len) {
                lx->at++; /* the quote is unterminated: reported on the next turn */
                continue;
            }
            tok->escaped = true;
            put(lx, lx->src[lx->at + 1], false, lx->at + 1);
            lx->at += 2;
            continue;
        }
        put(lx, c, true, lx->at);
        lx->at++;
    }
    lx->at++; /* closing quote */
    return BD_OK;
}

static bd_result lex_bare(query_lexer *lx, query_lex_mode mode, query_token *tok,
                          bd_query_error *err)
{
    tok->kind = TOK_WORD;
    while (lx->at < lx->len && !ends_bare_word(lx, lx->at, mode)) {
        char c = lx->src[lx->at];
        if (c == '\\') {
            if (lx->at + 1 >= lx->len)
                return query_fail(err, (int)lx->at,
                                  "backslash at %d escapes nothing; write \\\\ for a backslash",
                                  (int)lx->at);
            tok->escaped = true;
            put(lx, lx->src[lx->at + 1], false, lx->at + 1);
            lx->at += 2;
            continue;
        }
        put(lx, c, true, lx->at);
        lx->at++;
    }
    if (mode == LEX_OPERATOR && !tok->escaped) {
        if (lx->vlen == 3 && memcmp(lx->val, "AND", 3) == 0)
            tok->kind = TOK_AND;
        else if (lx->vlen == 2 && memcmp(lx->val, "OR", 2) == 0)
            tok->kind = TOK_OR;
        else if (lx->vlen == 3 && memcmp(lx->val, "NOT", 3) == 0)
            tok->kind = TOK_NOT;
    }
    return BD_OK;
}

bd_result query_lex_next(query_lexer *lx, query_lex_mode mode, query_token *tok,
                         bd_query_error *err)
{
    while (lx->at < lx->len && is_space((unsigned char)lx->src[lx->at]))
        lx->at++;
    *tok = (query_token){.kind = TOK_END, .pos = (int)lx->at};
    lx->vlen = 0;
    bd_result r = BD_OK;
    if (lx->at >= lx->len) {
        tok->end = tok->pos;
        return BD_OK;
    }
    char c = lx->src[lx->at];
    switch (c) {
    case '(':
        tok->kind = TOK_LPAREN;
        lx->at++;
        break;
    case ')':
        tok->kind = TOK_RPAREN;
        lx->at++;
        break;
    case '[':
    case '{':
        tok->kind = TOK_RANGE_OPEN;
        tok->ch = c;
        lx->at++;
        break;
    case ']':
    case '}':
        tok->kind = TOK_RANGE_CLOSE;
        tok->ch = c;
        lx->at++;
        break;
    case '"':
        r = lex_quoted(lx, tok, err);
        break;
    default:
        if (c == ':' && mode == LEX_OPERATOR) {
            tok->kind = TOK_COLON;
            lx->at++;
        } else if (double_char(lx, lx->at, '&')) {
            tok->kind = TOK_AND;
            lx->at += 2;
        } else if (double_char(lx, lx->at, '|')) {
            tok->kind = TOK_OR;
            lx->at += 2;
        } else if (c == '!' && mode == LEX_OPERATOR) {
            tok->kind = TOK_NOT;
            lx->at++;
        } else {
            r = lex_bare(lx, mode, tok, err);
        }
        break;
    }
    tok->end = (int)lx->at;
    return r;
}

bool query_lex_take_colon(query_lexer *lx)
{
    size_t i = lx->at;
    while (i < lx->len && is_space((unsigned char)lx->src[i]))
        i++;
    if (i < lx->len && lx->src[i] == ':') {
        lx->at = i + 1;
        return true;
    }
    return false;
}
