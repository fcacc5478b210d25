/* What every backend's card search SQL has in common (backend-neutral, used by
 * sqlite/cards_sql.c and pg/cards_sql.c): the cards table's columns, the layout of a card
 * number's columns, and the walk of a condition tree whose AND, OR and NOT read the same
 * in every dialect. Each backend writes the leaves (number patterns, words, ranges, values)
 * in its own SQL. Writes only SQL text; no value from a request becomes part of it. */
#ifndef BD_STORE_CARD_SQL_H
#define BD_STORE_CARD_SQL_H

#include <stdbool.h>
#include <stddef.h>

#include "store/store.h"

/* How deep a condition tree may nest before the walk gives up with BD_ERR_LIMIT. */
#define BD_CARD_COND_MAX_DEPTH 64

/* The cards table's column of a card field (every backend's schema names them alike). */
const char *bd_card_sql_col(bd_card_column column);

/* The cards table keeps the last four digits reversed, so that a pattern on the end of the
 * number is a prefix range, and every number has at least 12 digits. Writes the condition's
 * last4 in the tail column's order (when tail is not NULL) and returns the length bound
 * still worth checking (0: none). */
int bd_card_number_layout(const bd_card_cond *k, char tail[5]);
/* Whether p (a bin or tail pattern) is plain digits. */
bool bd_card_plain_digits(const char *p);
/* Writes to end (n + 1 bytes) the first string after every string that starts with the n
 * plain digits of p: p with its last digit raised by one ('9' + 1 is ':'). */
void bd_card_digits_end(const char *p, size_t n, char *end);

/* A backend's SQL for the walk: its boolean literals and its writers. */
typedef struct {
    const char *true_sql, *false_sql; /* "1" and "0", or "true" and "false" */
    void (*emit)(void *w, const char *text); /* appends SQL text */
    void (*fail)(void *w, bd_result r);      /* the tree is too deep (BD_ERR_LIMIT) */
    /* each appends a leaf of its kind as an SQL boolean over "cards c" */
    void (*number)(void *w, const bd_card_cond *k); /* NUMBER */
    void (*hmac)(void *w, const bd_card_cond *k);   /* HMAC and CVV */
    void (*equals)(void *w, const bd_card_cond *k); /* EQUALS */
    void (*words)(void *w, const bd_card_cond *k);  /* WORDS */
    void (*range)(void *w, const bd_card_cond *k);  /* RANGE */
} bd_card_dialect;

/* Appends cond k as an SQL boolean over "cards c": ALL is true; AND and OR parenthesised,
 * their kids joined; NOT negates its kid with the unknown taken as false first (a card with
 * no value for a field is not matched by a condition on it, so NOT must include it). */
void bd_card_cond_walk(const bd_card_dialect *d, void *w, const bd_card_cond *k);

#endif
