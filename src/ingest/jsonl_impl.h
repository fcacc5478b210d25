/* Private to the JSON Lines parser (src/ingest/jsonl.c, jsonl_why.c): whitespace skipping
 * and the explanation of a line jansson refused. */
#ifndef BD_INGEST_JSONL_IMPL_H
#define BD_INGEST_JSONL_IMPL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

static inline bool is_ws(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* The scanners only ever see text jansson accepted, so they need not validate; they still
 * never read past n. */
static inline size_t skip_ws(const char *p, size_t i, size_t n)
{
    while (i < n && is_ws(p[i]))
        i++;
    return i;
}

/* Explains in why (truncated to whylen) why jansson refused line[0..len): a fixed reason, and
 * where, by field; never a byte of the line. */
void bd_jsonl_error_why(const char *line, size_t len, const json_error_t *err, char *why,
                        size_t whylen);

#endif
