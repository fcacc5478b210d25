/* Private to the PostgreSQL card search (cards.c, cards_sql.c): the words of owners and
 * banks, and the condition tree turned into SQL.
 *
 * Every value a condition needs travels in one bound parameter, a text[] array sent in
 * binary format, and the SQL names its elements ("(($1::text[])[3])"): a query of 64 terms
 * or a phrase of many words needs no more parameters than a single word, and nothing from
 * the request is ever part of the SQL text. */
#ifndef BD_STORE_PG_CARDS_SQL_H
#define BD_STORE_PG_CARDS_SQL_H

#include "core/buf.h"
#include "store/card_sql.h" /* the columns, number layout and tree walk every backend shares */
#include "store/pg/pg_impl.h"

/* pg_card_sql (pg_impl.h): init once per connection (allocates nothing), begin for each
 * search (empties it, keeping the storage), free at close. */
void pg_card_sql_init(pg_card_sql *c);
void pg_card_sql_begin(pg_card_sql *c);
void pg_card_sql_free(pg_card_sql *c);
/* Appends SQL text. */
void pg_card_emit(pg_card_sql *c, const char *text);
/* Appends a value to the array and "(($1::text[])[n])" naming it to the SQL. */
void pg_card_value(pg_card_sql *c, const char *p, size_t n);
/* Adds a value to the array without naming it in the SQL (which names the whole array). */
void pg_card_add_value(pg_card_sql *c, const char *p, size_t n);
/* Appends cond k as an SQL boolean over "cards c", with SQLite's meaning to the letter. */
void pg_card_cond(pg_card_sql *c, const bd_card_cond *k);
/* When k is a word match (BD_CC_WORDS), appends a query counting its cards straight off
 * the word index, without reading the cards, and returns true. */
bool pg_card_word_count(pg_card_sql *c, const bd_card_cond *k);
/* Adds the values array to pp when the SQL uses it (it is then $1). */
void pg_card_params(pg_card_sql *c, pg_params *pp);

/* Splits text into words exactly as SQLite's FTS5 unicode61 tokenizer with
 * remove_diacritics 2 does (it is that tokenizer, run in memory), which is what the SQLite
 * backend indexes and matches: the words, separated by single spaces (a word never holds
 * one), are appended to out and *count says how many. */
bd_result pg_card_words(bd_slice text, bd_buf *out, int *count);

/* The first string after every string that starts with prefix, for a range scan: prefix
 * with its last character raised to the next code point (UTF-8 bytes compare in code point
 * order). false when there is none (the last character is U+10FFFF). */
bool pg_card_prefix_end(const char *prefix, size_t n, bd_buf *out);

#endif
