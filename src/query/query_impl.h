/* Internals shared by the query lexer, parser, value checks and tree: not for other modules,
 * which use query.h only. */
#ifndef BD_QUERY_QUERY_IMPL_H
#define BD_QUERY_QUERY_IMPL_H

#include <stdint.h>

#include "query/query.h"

/* Upper bound on nodes: at most 64 leaves, 63 AND/OR nodes and one NOT per other node give
 * 254; the parser still checks and refuses a query that would need more. */
#define QUERY_MAX_NODES 256

/* ---- lexer (lexer.c) ---- */

typedef enum {
    TOK_END,
    TOK_LPAREN,
    TOK_RPAREN,
    TOK_AND, /* AND && */
    TOK_OR,  /* OR || */
    TOK_NOT, /* NOT ! */
    TOK_WORD,
    TOK_COLON,
    TOK_RANGE_OPEN,  /* [ { */
    TOK_RANGE_CLOSE, /* ] } */
} query_tok_kind;

typedef struct {
    query_tok_kind kind;
    int pos, end; /* source span [pos, end) */
    bool quoted;  /* WORD: written as "..." */
    bool escaped; /* WORD: held at least one backslash escape */
    char ch;      /* RANGE_OPEN/RANGE_CLOSE: the bracket */
} query_token;

/* OPERATOR: between terms, where AND/OR/NOT/!/:/( mean something. VALUE: right after
 * "field:" and inside a range, where a bare word may hold ':' and '!' and the words AND, OR,
 * NOT, TO are plain words. */
typedef enum { LEX_OPERATOR, LEX_VALUE } query_lex_mode;

/* The decoded bytes of the last WORD token: escapes removed, quotes dropped. wild[i] is 1
 * when val[i] is an unescaped '*' or '?', i.e. a wildcard; vpos[i] is where the byte came
 * from in the query text. */
typedef struct {
    const char *src;
    size_t len, at;
    size_t vlen;
    char val[BD_QUERY_MAX_BYTES];
    unsigned char wild[BD_QUERY_MAX_BYTES];
    uint16_t vpos[BD_QUERY_MAX_BYTES];
} query_lexer;

void query_lex_init(query_lexer *lx, const char *src, size_t len);
/* Reads the next token into *tok. BD_ERR_INVALID (err filled) on an unterminated quote or a
 * trailing backslash. */
bd_result query_lex_next(query_lexer *lx, query_lex_mode mode, query_token *tok,
                         bd_query_error *err);
/* After a bare word: consumes optional white space and a ':' and returns true when a ':'
 * follows; otherwise consumes nothing and returns false. */
bool query_lex_take_colon(query_lexer *lx);
/* The first byte offset holding an ASCII control character that is not white space, or -1. */
int query_find_control(const char *src, size_t len);

/* ---- errors (lexer.c) ---- */

/* Fills err (pos and a formatted message) and returns BD_ERR_INVALID. */
bd_result query_fail(bd_query_error *err, int pos, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Writes a printable-ASCII rendering of p[0..n) into out (cap >= 104): bytes outside
 * 0x20..0x7e become \xHH, and more than 24 bytes are cut with "...". */
void query_describe(char *out, size_t cap, const char *p, size_t n);

/* ---- tree (ast.c) ---- */

struct bd_query {
    int n_nodes;
    int root;
    int n_exact; /* NUMBER_EXACT and HASH leaves */
    bd_query_node nodes[QUERY_MAX_NODES];
    /* Children while building: singly linked through indexes (-1 = none), turned into the
     * public child arrays by query_finish. */
    int first[QUERY_MAX_NODES], last[QUERY_MAX_NODES], next[QUERY_MAX_NODES];
    const bd_query_node *child_ptrs[QUERY_MAX_NODES];
    /* Pools for strings and word lists, sized from the query length at allocation. */
    char *text;
    size_t text_len, text_cap;
    bd_slice *words;
    size_t n_words, words_cap;
};

/* NULL when len is beyond BD_QUERY_MAX_BYTES or memory is short. */
bd_query *query_alloc(size_t len);
/* A new zeroed node of kind at pos; -1 when the node array is full. */
int query_node_new(bd_query *q, bd_query_kind kind, bd_query_field field, int pos);
/* left <kind> right, flattening children of the same kind; -1 when full. */
int query_combine(bd_query *q, bd_query_kind kind, int left, int right);
/* NOT child (removing a double negation); -1 when full. */
int query_negate(bd_query *q, int child, int pos);
/* Copies p[0..n) plus a NUL into the text pool; NULL when it is full. */
char *query_text_add(bd_query *q, const char *p, size_t n);
/* Builds the public child arrays; call once, after parsing. */
void query_finish(bd_query *q);

/* ---- values (value.c) ---- */

/* Checks the WORD just lexed (starting at value_pos) as a value of field and adds its leaf
 * node (*out) at term_pos. fielded: the user wrote "field:" (only changes error hints);
 * quoted: the value was "...". */
bd_result query_value_leaf(bd_query *q, const query_lexer *lx, bd_query_field field, bool fielded,
                           bool quoted, int term_pos, int value_pos, int *out, bd_query_error *err);

/* One end of a range, checked as it is read. */
typedef struct {
    bool open;     /* '*' */
    bool has_time; /* createdAt "YYYY-MM-DD HH:MM:SS" rather than a date */
    int y, m, d, hh, mi, ss;
    int pos;
    char text[20]; /* as written, for messages */
} query_bound;

/* Checks the WORD just lexed (starting at pos) as a range bound on field (createdAt or
 * expireDate). */
bd_result query_range_bound(const query_lexer *lx, bd_query_field field, int pos, query_bound *b,
                            bd_query_error *err);
/* Adds a DATE_RANGE node for lower..upper (brackets '[' or '{', ']' or '}'); refuses a range
 * whose lower end is after its upper end. */
bd_result query_range_leaf(bd_query *q, bd_query_field field, int term_pos, const query_bound *lo,
                           char open_ch, const query_bound *hi, char close_ch, int *out,
                           bd_query_error *err);

#endif
