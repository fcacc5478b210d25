/* breachctl import pastes: one paste a line of JSON,
 *   {"source":"Pastebin","id":"8Q0BvKD8","title":"syslog","date":"2014-03-04T19:14:54Z",
 *    "email_count":139,"emails":["a@example.com",...]}
 * title, date and email_count optional (email_count: the emails listed); each email
 * normalised as an email search's (ingest/normalize.h). */
#include "cli/import_pastes.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "core/date.h"
#include "core/term.h"
#include "ingest/normalize.h"
#include "store/pastes.h"

#define PASTE_SOURCE_MAX 64
#define PASTE_ID_MAX 256
#define PASTE_TITLE_MAX 1024
#define PASTE_EMAILS_MAX 100000 /* emails one line may list */

/* "YYYY-MM-DD", "YYYY-MM-DD[ T]HH:MM:SS" with an optional "Z": Unix seconds in *out. */
static bool paste_date(const char *text, int64_t *out)
{
    size_t n = strlen(text);
    if (n && text[n - 1] == 'Z')
        n--;
    bd_datetime d;
    if (!bd_date_parse_iso((bd_slice){text, n}, &d) && !bd_datetime_parse((bd_slice){text, n}, &d))
        return false;
    struct tm t = {.tm_year = d.y - 1900, .tm_mon = d.m - 1, .tm_mday = d.d, .tm_hour = d.hh,
                   .tm_min = d.mi, .tm_sec = d.ss};
    *out = (int64_t)timegm(&t);
    return true;
}

static bool text_member(json_t *o, const char *key, size_t max, bool required, bd_slice *out,
                        const char **why)
{
    json_t *v = json_object_get(o, key);
    *out = (bd_slice){NULL, 0};
    if (!v || json_is_null(v)) {
        if (required)
            *why = "a member is missing";
        return !required;
    }
    if (!json_is_string(v) || (required && json_string_length(v) == 0) ||
        json_string_length(v) > max) {
        *why = "a member is not a string of the allowed length";
        return false;
    }
    *out = (bd_slice){json_string_value(v), json_string_length(v)};
    return true;
}

/* One line into the store; false (with *why) when the line is refused. */
static bd_result import_line(bd_store *s, const char *line, bool *inserted, char *why,
                             size_t whylen)
{
    json_error_t err;
    json_t *o = json_loads(line, JSON_REJECT_DUPLICATES, &err);
    const char *reason = NULL;
    bd_paste_row p = {.date = -1};
    bd_slice *emails = NULL;
    char *norm = NULL;
    size_t n = 0;
    bd_result r = BD_ERR_INVALID;
    if (!o || !json_is_object(o)) {
        reason = "not a JSON object";
        goto out;
    }
    if (!text_member(o, "source", PASTE_SOURCE_MAX, true, &p.source, &reason) ||
        !text_member(o, "id", PASTE_ID_MAX, true, &p.id, &reason) ||
        !text_member(o, "title", PASTE_TITLE_MAX, false, &p.title, &reason))
        goto out;
    json_t *date = json_object_get(o, "date");
    if (date && !json_is_null(date) &&
        (!json_is_string(date) || !paste_date(json_string_value(date), &p.date))) {
        reason = "'date' is not a date like 2014-03-04 or 2014-03-04T19:14:54Z";
        goto out;
    }
    json_t *list = json_object_get(o, "emails");
    if (!json_is_array(list) || json_array_size(list) == 0 ||
        json_array_size(list) > PASTE_EMAILS_MAX) {
        reason = "'emails' is not a list of 1 to 100000 email addresses";
        goto out;
    }
    n = json_array_size(list);
    emails = calloc(n, sizeof *emails);
    norm = malloc(n * (BD_NORM_MAX + 1));
    if (!emails || !norm) {
        reason = "out of memory";
        r = BD_ERR_NOMEM;
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        json_t *e = json_array_get(list, i);
        char *to = norm + i * (BD_NORM_MAX + 1);
        size_t len;
        const char *bad = NULL;
        if (!json_is_string(e) ||
            bd_normalize(BD_ID_EMAIL, (bd_slice){json_string_value(e), json_string_length(e)},
                         to, &len, &bad) != BD_OK) {
            snprintf(why, whylen, "email %zu of 'emails' is not an email address", i + 1);
            r = BD_ERR_INVALID;
            goto done;
        }
        emails[i] = (bd_slice){to, len};
    }
    p.email_count = (int64_t)n;
    json_t *count = json_object_get(o, "email_count");
    if (count && !json_is_null(count)) {
        if (!json_is_integer(count) || json_integer_value(count) < (json_int_t)n) {
            reason = "'email_count' is not a whole number at least the emails listed";
            goto out;
        }
        p.email_count = (int64_t)json_integer_value(count);
    }
    r = bd_store_paste_put(s, &p, emails, n, inserted);
    if (r != BD_OK)
        reason = bd_result_str(r);
out:
    if (reason)
        snprintf(why, whylen, "%s", reason);
done:
    free(emails);
    free(norm);
    json_decref(o);
    return r;
}

int bd_cli_import_pastes(bd_store *s, char *const *files, size_t nfiles)
{
    int status = BD_EXIT_OK;
    for (size_t f = 0; f < nfiles; f++) {
        FILE *in = fopen(files[f], "r");
        if (!in) {
            bd_term_printf(stderr, "breachctl import: cannot read %s", files[f]);
            fputc('\n', stderr);
            return BD_EXIT_FAIL;
        }
        int64_t added = 0, known = 0, refused = 0, lineno = 0;
        char *line = NULL;
        size_t cap = 0;
        ssize_t len;
        bd_result r = bd_store_begin(s);
        while (r == BD_OK && (len = getline(&line, &cap, in)) >= 0) {
            lineno++;
            while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
                line[--len] = '\0';
            if (len == 0)
                continue;
            bool inserted = false;
            char why[160] = "";
            bd_result lr = import_line(s, line, &inserted, why, sizeof why);
            if (lr == BD_ERR_INVALID) {
                bd_term_printf(stderr, "%s:%lld: paste refused: %s", files[f],
                               (long long)lineno, why);
                fputc('\n', stderr);
                refused++;
            } else if (lr != BD_OK) {
                r = lr;
            } else if (inserted) {
                added++;
            } else {
                known++;
            }
        }
        free(line);
        bool read_error = ferror(in);
        fclose(in);
        if (r == BD_OK && !read_error)
            r = bd_store_commit(s);
        else
            bd_store_rollback(s);
        if (r != BD_OK || read_error) {
            bd_term_printf(stderr, "breachctl import: %s: %s, nothing of it imported", files[f],
                           read_error ? "a read failed" : bd_result_str(r));
            fputc('\n', stderr);
            return BD_EXIT_FAIL;
        }
        bd_term_printf(stderr,
                       "%s: %lld pastes imported, %lld already there (their emails added), "
                       "%lld refused",
                       files[f], (long long)added, (long long)known, (long long)refused);
        fputc('\n', stderr);
        if (refused)
            status = BD_EXIT_REJECTED;
    }
    return status;
}
