/* Card query language (PRODUCT.md "Card query language"): parses the `query` parameter of
 * credit-card-search into a small tree that a store planner turns into bound-parameter SQL.
 *
 * Ownership: bd_query_parse returns a bd_query that the caller owns and releases with
 * bd_query_free. Every node, child array, word and string reachable from it lives inside that
 * one allocation and dies with it; nothing points into the query text the caller passed.
 *
 * Every value in the tree is already validated and normalised (see each kind below), so a
 * planner only maps kinds to SQL and binds the strings as parameters. The grammar, the
 * decisions behind each check and the limits are in docs/internals/QUERY.md. */
#ifndef BD_QUERY_QUERY_H
#define BD_QUERY_QUERY_H

#include <stdbool.h>
#include <stddef.h>

#include "core/buf.h"
#include "core/result.h"
#include "core/slice.h"

#define BD_QUERY_MAX_BYTES 4096 /* longer query text: error */
#define BD_QUERY_MAX_DEPTH 32   /* parentheses nested deeper: error */
#define BD_QUERY_MAX_TERMS 64   /* more field:value terms: error */
/* More full card numbers or Hash: values, anywhere in the tree (under NOT too): error. Each
 * one is a yes/no test of a hidden card number, so a query may hold only one, and each query
 * holding one is charged to the key's budget of exact lookups (docs/API.md, "Exact-number
 * lookups and their budget"). */
#define BD_QUERY_MAX_EXACT 1
#define BD_QUERY_MAX_LEAK_ID 128

typedef enum {
    BD_QUERY_ALL,            /* matches every card (empty query, number:*) */
    BD_QUERY_AND,            /* every child matches */
    BD_QUERY_OR,             /* at least one child matches */
    BD_QUERY_NOT,            /* the single child does not match */
    BD_QUERY_NUMBER_PATTERN, /* masked-number pattern: bin, last4, length, min_length */
    BD_QUERY_NUMBER_EXACT,   /* one full card number: value holds its digits */
    BD_QUERY_HASH,           /* value: 64 lower-case hex digits, SHA-256 of the digits */
    BD_QUERY_WORD,           /* owner or bank word, word prefix or phrase: words, prefix */
    BD_QUERY_CVV,            /* value: 3 or 4 digits, exact */
    BD_QUERY_LEAK_ID,        /* value: 1..128 bytes, exact */
    BD_QUERY_DATE_RANGE,     /* createdAt or expireDate within lower..upper */
} bd_query_kind;

typedef enum {
    BD_QUERY_FIELD_NONE, /* ALL, AND, OR, NOT */
    BD_QUERY_FIELD_CREATED_AT,
    BD_QUERY_FIELD_NUMBER,
    BD_QUERY_FIELD_HASH,
    BD_QUERY_FIELD_EXPIRE_DATE,
    BD_QUERY_FIELD_CVV,
    BD_QUERY_FIELD_OWNER,
    BD_QUERY_FIELD_BANK,
    BD_QUERY_FIELD_LEAK_ID,
} bd_query_field;

typedef struct bd_query_node bd_query_node;

/* One node. Only the members listed for a node's kind are meaningful; the others are zero. */
struct bd_query_node {
    bd_query_kind kind;
    bd_query_field field; /* the field a leaf searches; NONE for ALL/AND/OR/NOT */
    int pos;              /* byte offset in the query text where the term or operator starts */

    /* AND, OR: n_children >= 2, and no child has the node's own kind (a AND (b AND c) is
     * flattened to one AND of three). NOT: n_children == 1, never a NOT (double negation is
     * removed). */
    size_t n_children;
    const bd_query_node *const *children;

    /* NUMBER_PATTERN. '?' in bin and last4 stands for any one digit.
     * bin: 0..6 chars anchored at the first digit ("41" = starts with 41), trailing '?' trimmed.
     * last4: 0..4 chars anchored at the last digit ("11" = ends with 11), leading '?' trimmed.
     * length: the exact number of digits (pattern without '*'), or -1 (any length).
     * min_length: how many digits the pattern spells out; a card needs at least that many.
     * Both strings empty and length -1 still means "any card with >= min_length digits". */
    char bin[7];
    char last4[5];
    int length;
    int min_length;

    /* NUMBER_EXACT, HASH, CVV, LEAK_ID: the normalised value (also NUL-terminated). LEAK_ID
     * may hold any byte except ASCII control characters. */
    bd_slice value;

    /* WORD (owner or bank): n_words >= 1 lower-case words (ASCII letters and digits, and any
     * byte >= 0x80 kept as it is). One word: the field contains that word. Several: the field
     * contains them as a phrase, in order. prefix: the last word is a prefix (jo*). */
    size_t n_words;
    const bd_slice *words;
    bool prefix;

    /* DATE_RANGE: createdAt bounds are "YYYY-MM-DD HH:MM:SS", expireDate bounds "YYYY-MM-DD".
     * A missing bound (has_lower/has_upper false) is an open end; its inclusive flag is true.
     * A range open at both ends (createdAt:* or [* TO *]) means "the field has a value". */
    bool has_lower, has_upper;
    bool lower_inclusive, upper_inclusive;
    char lower[20], upper[20];
};

typedef struct bd_query bd_query;

/* Where and why a query was refused. pos is a 0-based byte offset into the query text (the
 * text length when the problem is its end); message is printable ASCII, names the position
 * ("... at 17") and says how to fix the query, so it can go to the client unchanged. */
typedef struct {
    int pos;
    char message[200];
} bd_query_error;

/* Parses text[0..len) (any bytes; NUL is not a terminator and is refused like every ASCII
 * control character other than white space). On success stores a new query in *out and
 * returns BD_OK. On a bad query returns BD_ERR_INVALID with *err filled (clients get 422);
 * BD_ERR_NOMEM when allocation fails. *out is NULL on any error. err may be NULL. Runs in
 * time linear in len and recurses at most BD_QUERY_MAX_DEPTH levels. */
bd_result bd_query_parse(const char *text, size_t len, bd_query **out, bd_query_error *err);

/* Releases q and everything reachable from it. NULL is ignored. */
void bd_query_free(bd_query *q);

/* The root node of a parsed query; never NULL. */
const bd_query_node *bd_query_root(const bd_query *q);

/* How many NUMBER_EXACT and HASH leaves q holds, anywhere in the tree: 0..BD_QUERY_MAX_EXACT.
 * Non-zero means the query looks a card up by its full number. */
int bd_query_exact_terms(const bd_query *q);

/* The canonical spelling of a field ("createdAt", "Hash", ...); "" for NONE. */
const char *bd_query_field_name(bd_query_field f);

/* Appends the canonical S-expression form of q to out, e.g.
 *   (AND (owner "john") (OR (number bin=411111 last4=1111 len=16) (NOT (cvv "123"))))
 * The form is documented in docs/internals/QUERY.md; tests and logs use it. Returns
 * BD_ERR_LIMIT or BD_ERR_NOMEM from the buffer, which then holds a partial form. */
bd_result bd_query_to_string(const bd_query *q, bd_buf *out);

#endif
