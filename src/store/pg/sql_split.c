/* pg_sql_first_statement: a small scanner of PostgreSQL's lexical rules for what can hold
 * a semicolon that does not end a statement. */
#include <stdbool.h>
#include <string.h>

#include "store/pg/sql_split.h"

/* Past a dollar quote's closing tag, or the end: s points at the opening tag's '$'. */
static const char *past_dollar_quote(const char *s)
{
    const char *tag_end = strchr(s + 1, '$');
    if (!tag_end)
        return s + strlen(s);
    size_t tag_len = (size_t)(tag_end - s) + 1;
    for (const char *p = tag_end + 1; *p; p++)
        if (*p == '$' && strncmp(p, s, tag_len) == 0)
            return p + tag_len;
    return s + strlen(s);
}

static bool tag_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || (unsigned char)c >= 0x80;
}

/* Whether s (a '$') opens a dollar quote: $$ or $tag$ with a tag that does not start with
 * a digit ($1 is a parameter). */
static bool opens_dollar_quote(const char *s)
{
    const char *p = s + 1;
    if (*p >= '0' && *p <= '9')
        return false;
    while (tag_char(*p))
        p++;
    return *p == '$';
}

size_t pg_sql_first_statement(const char *sql, const char **next)
{
    const char *p = sql;
    while (*p && *p != ';') {
        if (*p == '\'' || *p == '"') { /* '' and "" inside are two quotes in a row */
            char q = *p++;
            while (*p && !(*p == q && p[1] != q))
                p += *p == q ? 2 : 1;
            p += *p ? 1 : 0;
        } else if (p[0] == '-' && p[1] == '-') {
            p += strcspn(p, "\n");
        } else if (p[0] == '/' && p[1] == '*') {
            const char *end = strstr(p + 2, "*/");
            p = end ? end + 2 : p + strlen(p);
        } else if (*p == '$' && opens_dollar_quote(p)) {
            p = past_dollar_quote(p);
        } else {
            p++;
        }
    }
    *next = *p ? p + 1 : p;
    return (size_t)(p - sql);
}
