/* Slack, Teams and Splunk HEC alert bodies (formats.h). */
#include "webhook/formats.h"

#include <sodium.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "ingest/watch_spec.h"
#include "webhook/payload.h"

static const char *const NAMES[BD_WATCH_FORMATS] = {"json", "slack", "teams", "splunk-hec",
                                                    "email"};

const char *bd_watch_format_name(int format)
{
    return format >= 0 && format < BD_WATCH_FORMATS ? NAMES[format] : "json";
}

bool bd_watch_format_parse(bd_slice s, int *format)
{
    for (int f = 0; f < BD_WATCH_FORMATS; f++)
        if (s.len == strlen(NAMES[f]) && memcmp(s.ptr, NAMES[f], s.len) == 0) {
            *format = f;
            return true;
        }
    return false;
}

bool bd_watch_format_needs_secret(int format)
{
    return format == BD_WATCH_FORMAT_JSON || format == BD_WATCH_FORMAT_SPLUNK_HEC;
}

void bd_alert_account_masked(int watch_type, bd_slice shown, char *out, size_t cap)
{
    const char *at = watch_type == BD_FIELD_EMAIL ? memchr(shown.ptr, '@', shown.len) : NULL;
    int n;
    if (at && at > shown.ptr) {
        size_t dl = shown.len - (size_t)(at - shown.ptr);
        n = snprintf(out, cap, "%c***%.*s", shown.ptr[0], (int)dl, at);
    } else if (watch_type == BD_FIELD_EMAIL || watch_type == BD_FIELD_PHONE ||
               watch_type == BD_FIELD_USERNAME || watch_type == BD_FIELD_IP) {
        n = shown.len > 4 ? snprintf(out, cap, "%c***%.2s", shown.ptr[0], shown.ptr + shown.len - 2)
                          : snprintf(out, cap, "***");
    } else {
        n = snprintf(out, cap, "%.*s", (int)shown.len, shown.ptr ? shown.ptr : "");
    }
    (void)n; /* cut at cap - 1 */
}

/* The facts every chat body shows. */
typedef struct {
    char type[32];
    char account[300];
    char breach[300];
    char when[32];
    char count[32];
    const char *count_label; /* "Records" or "Cards" */
    char summary[800];
} facts;

/* Copies s, its control characters (line breaks among them: a breach name is anyone's
 * text, and a mail header must stay one line) as spaces. */
static void copy(char *out, size_t cap, bd_slice s)
{
    size_t n = s.ptr ? (s.len < cap ? s.len : cap - 1) : 0;
    for (size_t i = 0; i < n; i++)
        out[i] = (unsigned char)s.ptr[i] < 0x20 || s.ptr[i] == 0x7f ? ' ' : s.ptr[i];
    out[n] = '\0';
}

static void facts_of(const bd_alert_row *a, facts *f)
{
    bool card = a->watch_type == BD_WATCH_BIN;
    snprintf(f->type, sizeof f->type, "%s", bd_watch_type_name(a->watch_type));
    bd_alert_account_masked(a->watch_type, a->watch_shown, f->account, sizeof f->account);
    for (char *p = f->account; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = ' ';
    if (card)
        snprintf(f->breach, sizeof f->breach, "cards");
    else
        copy(f->breach, sizeof f->breach, a->breach_name);
    time_t t = (time_t)a->created_at;
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(f->when, sizeof f->when, "%Y-%m-%d %H:%M UTC", &tm);
    snprintf(f->count, sizeof f->count, "%lld", (long long)a->matched);
    f->count_label = card ? "Cards" : "Records";
    if (card)
        snprintf(f->summary, sizeof f->summary, "breachd: %lld new card%s of BIN %s",
                 (long long)a->matched, a->matched == 1 ? "" : "s", f->account);
    else
        snprintf(f->summary, sizeof f->summary, "breachd: %s %s found in %s (%lld record%s)",
                 f->type, f->account, f->breach, (long long)a->matched,
                 a->matched == 1 ? "" : "s");
}

/* Slack's mrkdwn reads &, < and > as markup: escaped as its documentation asks. */
static void mrkdwn_field(bd_json *w, const char *label, const char *value)
{
    char text[800];
    size_t n = (size_t)snprintf(text, sizeof text, "*%s*\n", label);
    for (const char *p = value; *p && n + 6 < sizeof text; p++) {
        const char *esc = *p == '&' ? "&amp;" : *p == '<' ? "&lt;" : *p == '>' ? "&gt;" : NULL;
        if (esc) {
            memcpy(text + n, esc, strlen(esc));
            n += strlen(esc);
        } else {
            text[n++] = *p;
        }
    }
    text[n] = '\0';
    bd_json_object_begin(w);
    BD_JSON_KEY(w, "type");
    bd_json_cstring(w, "mrkdwn");
    BD_JSON_KEY(w, "text");
    bd_json_cstring(w, text);
    bd_json_object_end(w);
}

static void plain_text(bd_json *w, const char *text)
{
    bd_json_object_begin(w);
    BD_JSON_KEY(w, "type");
    bd_json_cstring(w, "plain_text");
    BD_JSON_KEY(w, "text");
    bd_json_cstring(w, text);
    bd_json_object_end(w);
}

void bd_alert_write_slack(bd_json *w, const bd_alert_row *a, const char *console_url)
{
    facts f;
    facts_of(a, &f);
    bd_json_object_begin(w);
    BD_JSON_KEY(w, "text");
    bd_json_cstring(w, f.summary);
    BD_JSON_KEY(w, "blocks");
    bd_json_array_begin(w);
    bd_json_object_begin(w);
    BD_JSON_KEY(w, "type");
    bd_json_cstring(w, "header");
    BD_JSON_KEY(w, "text");
    plain_text(w, "Breach exposure found");
    bd_json_object_end(w);
    bd_json_object_begin(w);
    BD_JSON_KEY(w, "type");
    bd_json_cstring(w, "section");
    BD_JSON_KEY(w, "fields");
    bd_json_array_begin(w);
    mrkdwn_field(w, "Identity type", f.type);
    mrkdwn_field(w, "Account", f.account);
    mrkdwn_field(w, "Breach", f.breach);
    mrkdwn_field(w, "Date", f.when);
    mrkdwn_field(w, f.count_label, f.count);
    bd_json_array_end(w);
    bd_json_object_end(w);
    if (console_url) {
        bd_json_object_begin(w);
        BD_JSON_KEY(w, "type");
        bd_json_cstring(w, "actions");
        BD_JSON_KEY(w, "elements");
        bd_json_array_begin(w);
        bd_json_object_begin(w);
        BD_JSON_KEY(w, "type");
        bd_json_cstring(w, "button");
        BD_JSON_KEY(w, "text");
        plain_text(w, "Open the breachd console");
        BD_JSON_KEY(w, "url");
        bd_json_cstring(w, console_url);
        bd_json_object_end(w);
        bd_json_array_end(w);
        bd_json_object_end(w);
    }
    bd_json_object_begin(w);
    BD_JSON_KEY(w, "type");
    bd_json_cstring(w, "context");
    BD_JSON_KEY(w, "elements");
    bd_json_array_begin(w);
    char ev[96];
    snprintf(ev, sizeof ev, "event %.*s", (int)a->event_id.len, a->event_id.ptr);
    mrkdwn_field(w, "breachd", ev);
    bd_json_array_end(w);
    bd_json_object_end(w);
    bd_json_array_end(w);
    bd_json_object_end(w);
}

static void fact(bd_json *w, const char *title, const char *value)
{
    bd_json_object_begin(w);
    BD_JSON_KEY(w, "title");
    bd_json_cstring(w, title);
    BD_JSON_KEY(w, "value");
    bd_json_cstring(w, value);
    bd_json_object_end(w);
}

static void text_block(bd_json *w, const char *text, bool heading)
{
    bd_json_object_begin(w);
    BD_JSON_KEY(w, "type");
    bd_json_cstring(w, "TextBlock");
    BD_JSON_KEY(w, "text");
    bd_json_cstring(w, text);
    if (heading) {
        BD_JSON_KEY(w, "weight");
        bd_json_cstring(w, "Bolder");
        BD_JSON_KEY(w, "size");
        bd_json_cstring(w, "Medium");
    }
    BD_JSON_KEY(w, "wrap");
    bd_json_bool(w, true);
    bd_json_object_end(w);
}

void bd_alert_write_teams(bd_json *w, const bd_alert_row *a, const char *console_url)
{
    facts f;
    facts_of(a, &f);
    bd_json_object_begin(w);
    BD_JSON_KEY(w, "type");
    bd_json_cstring(w, "message");
    BD_JSON_KEY(w, "attachments");
    bd_json_array_begin(w);
    bd_json_object_begin(w);
    BD_JSON_KEY(w, "contentType");
    bd_json_cstring(w, "application/vnd.microsoft.card.adaptive");
    BD_JSON_KEY(w, "contentUrl");
    bd_json_null(w);
    BD_JSON_KEY(w, "content");
    bd_json_object_begin(w);
    BD_JSON_KEY(w, "$schema");
    bd_json_cstring(w, "http://adaptivecards.io/schemas/adaptive-card.json");
    BD_JSON_KEY(w, "type");
    bd_json_cstring(w, "AdaptiveCard");
    BD_JSON_KEY(w, "version");
    bd_json_cstring(w, "1.4");
    BD_JSON_KEY(w, "body");
    bd_json_array_begin(w);
    text_block(w, "Breach exposure found", true);
    text_block(w, f.summary, false);
    bd_json_object_begin(w);
    BD_JSON_KEY(w, "type");
    bd_json_cstring(w, "FactSet");
    BD_JSON_KEY(w, "facts");
    bd_json_array_begin(w);
    fact(w, "Identity type", f.type);
    fact(w, "Account", f.account);
    fact(w, "Breach", f.breach);
    fact(w, "Date", f.when);
    fact(w, f.count_label, f.count);
    bd_json_array_end(w);
    bd_json_object_end(w);
    bd_json_array_end(w);
    if (console_url) {
        BD_JSON_KEY(w, "actions");
        bd_json_array_begin(w);
        bd_json_object_begin(w);
        BD_JSON_KEY(w, "type");
        bd_json_cstring(w, "Action.OpenUrl");
        BD_JSON_KEY(w, "title");
        bd_json_cstring(w, "Open the breachd console");
        BD_JSON_KEY(w, "url");
        bd_json_cstring(w, console_url);
        bd_json_object_end(w);
        bd_json_array_end(w);
    }
    bd_json_object_end(w);
    bd_json_object_end(w);
    bd_json_array_end(w);
    bd_json_object_end(w);
}

void bd_alert_write_hec(bd_json *w, const bd_alert_row *a)
{
    bd_json_object_begin(w);
    BD_JSON_KEY(w, "time");
    bd_json_int(w, a->created_at);
    BD_JSON_KEY(w, "source");
    bd_json_cstring(w, "breachd");
    BD_JSON_KEY(w, "sourcetype");
    bd_json_cstring(w, "breachd:alert");
    BD_JSON_KEY(w, "event");
    bd_alert_write_json(w, a, false);
    bd_json_object_end(w);
}

bd_slice bd_watch_url_shown(int format, bd_slice url, char *out, size_t cap)
{
    if (format != BD_WATCH_FORMAT_SLACK && format != BD_WATCH_FORMAT_TEAMS)
        return url;
    const char *scheme = url.ptr ? memchr(url.ptr, ':', url.len) : NULL;
    size_t start = scheme && (size_t)(scheme - url.ptr) + 3 <= url.len
                       ? (size_t)(scheme - url.ptr) + 3
                       : 0;
    size_t end = start;
    while (end < url.len && url.ptr[end] != '/' && url.ptr[end] != '?' && url.ptr[end] != '#')
        end++;
    int n = snprintf(out, cap, "%.*s/...", (int)end, url.ptr ? url.ptr : "");
    return (bd_slice){out, n > 0 && (size_t)n < cap ? (size_t)n : 0};
}

bd_result bd_watch_mailto_parse(bd_slice url, bd_slice *address, const char **why)
{
    static const char PREFIX[] = "mailto:";
    *why = "an email watch's url is mailto:ADDRESS (one address, nothing after it)";
    if (url.len <= sizeof PREFIX - 1 || strncasecmp(url.ptr, PREFIX, sizeof PREFIX - 1) != 0)
        return BD_ERR_INVALID;
    bd_slice a = {url.ptr + sizeof PREFIX - 1, url.len - (sizeof PREFIX - 1)};
    const char *at = memchr(a.ptr, '@', a.len);
    if (a.len > 254 || !at || at == a.ptr || at == a.ptr + a.len - 1 ||
        memchr(at + 1, '@', a.len - (size_t)(at - a.ptr) - 1))
        return BD_ERR_INVALID;
    for (size_t i = 0; i < a.len; i++) {
        unsigned char c = (unsigned char)a.ptr[i];
        if (c <= ' ' || c >= 0x7f || strchr("<>()[]\\,;:\"?&%", c))
            return BD_ERR_INVALID;
    }
    *address = a;
    *why = NULL;
    return BD_OK;
}

/* Appends text, NUL-terminated C string, to out; *ok false once an append failed. */
static void put(bd_buf *out, bool *ok, const char *text)
{
    if (*ok && bd_buf_append(out, text, strlen(text)) != BD_OK)
        *ok = false;
}

static void put_html(bd_buf *out, bool *ok, const char *text)
{
    char one[2] = {0, 0};
    for (const char *p = text; *p; p++) {
        const char *esc = *p == '&'    ? "&amp;"
                          : *p == '<'  ? "&lt;"
                          : *p == '>'  ? "&gt;"
                          : *p == '"'  ? "&quot;"
                          : *p == '\'' ? "&#39;"
                                       : NULL;
        one[0] = *p;
        put(out, ok, esc ? esc : one);
    }
}

/* A header's text: as is when ASCII, else RFC 2047 encoded words (UTF-8, base64) of at most
 * 45 bytes each, cut between characters, so a word stays within 75 characters; the words
 * after the first on folded lines. */
#define WORD_BYTES 45

static void put_header_text(bd_buf *out, bool *ok, const char *text)
{
    bool ascii = true;
    for (const char *p = text; *p; p++)
        ascii = ascii && (unsigned char)*p < 0x80;
    if (ascii) {
        put(out, ok, text);
        return;
    }
    size_t n = strlen(text);
    for (size_t i = 0; i < n;) {
        size_t k = n - i > WORD_BYTES ? WORD_BYTES : n - i;
        while (k > 1 && i + k < n && ((unsigned char)text[i + k] & 0xc0) == 0x80)
            k--; /* not inside a character */
        char b64[80];
        sodium_bin2base64(b64, sizeof b64, (const unsigned char *)text + i, k,
                          sodium_base64_VARIANT_ORIGINAL);
        put(out, ok, i ? "\r\n =?utf-8?B?" : "=?utf-8?B?");
        put(out, ok, b64);
        put(out, ok, "?=");
        i += k;
    }
}

bd_result bd_alert_write_mail(bd_buf *out, const bd_alert_row *a, const char *from, bd_slice to,
                              const char *console_url)
{
    facts f;
    facts_of(a, &f);
    char ev[64], line[1200], date[64];
    copy(ev, sizeof ev, a->event_id);
    time_t t = (time_t)a->created_at;
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(date, sizeof date, "%a, %d %b %Y %H:%M:%S +0000", &tm);
    bool ok = true;
    put(out, &ok, "From: breachd <");
    put(out, &ok, from);
    snprintf(line, sizeof line, ">\r\nTo: <%.*s>\r\nSubject: ", (int)to.len, to.ptr);
    put(out, &ok, line);
    put_header_text(out, &ok, f.summary);
    snprintf(line, sizeof line,
             "\r\nDate: %s\r\nMessage-ID: <%s@breachd>\r\nX-Breachd-Event-Id: %s\r\n"
             "MIME-Version: 1.0\r\n"
             "Content-Type: multipart/alternative; boundary=\"breachd-%s\"\r\n\r\n"
             "--breachd-%s\r\nContent-Type: text/plain; charset=utf-8\r\n"
             "Content-Transfer-Encoding: 8bit\r\n\r\n"
             "Breach exposure found\r\n\r\n",
             date, ev, ev, ev, ev);
    put(out, &ok, line);
    const char *labels[] = {"Identity type", "Account", "Breach", "Date", f.count_label};
    const char *values[] = {f.type, f.account, f.breach, f.when, f.count};
    for (int i = 0; i < 5; i++) {
        snprintf(line, sizeof line, "%s: %s\r\n", labels[i], values[i]);
        put(out, &ok, line);
    }
    if (console_url) {
        put(out, &ok, "\r\nOpen the breachd console: ");
        put(out, &ok, console_url);
        put(out, &ok, "\r\n");
    }
    snprintf(line, sizeof line,
             "Event: %s\r\n\r\n--breachd-%s\r\nContent-Type: text/html; charset=utf-8\r\n"
             "Content-Transfer-Encoding: 8bit\r\n\r\n"
             "<!DOCTYPE html>\r\n<html><body>\r\n<h2>Breach exposure found</h2>\r\n<table>\r\n",
             ev, ev);
    put(out, &ok, line);
    for (int i = 0; i < 5; i++) {
        put(out, &ok, "<tr><th align=\"left\">");
        put_html(out, &ok, labels[i]);
        put(out, &ok, "</th><td>");
        put_html(out, &ok, values[i]);
        put(out, &ok, "</td></tr>\r\n");
    }
    put(out, &ok, "</table>\r\n");
    if (console_url) {
        put(out, &ok, "<p><a href=\"");
        put_html(out, &ok, console_url);
        put(out, &ok, "\">Open the breachd console</a></p>\r\n");
    }
    snprintf(line, sizeof line, "<p>Event %s</p>\r\n</body></html>\r\n\r\n--breachd-%s--\r\n", ev,
             ev);
    put(out, &ok, line);
    return ok ? BD_OK : BD_ERR_NOMEM;
}
