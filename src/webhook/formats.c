/* Slack, Teams and Splunk HEC alert bodies (formats.h). */
#include "webhook/formats.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "ingest/watch_spec.h"
#include "webhook/payload.h"

static const char *const NAMES[BD_WATCH_FORMATS] = {"json", "slack", "teams", "splunk-hec"};

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

static void copy(char *out, size_t cap, bd_slice s)
{
    snprintf(out, cap, "%.*s", (int)(s.len < cap ? s.len : cap - 1), s.ptr ? s.ptr : "");
}

static void facts_of(const bd_alert_row *a, facts *f)
{
    bool card = a->watch_type == BD_WATCH_BIN;
    snprintf(f->type, sizeof f->type, "%s", bd_watch_type_name(a->watch_type));
    bd_alert_account_masked(a->watch_type, a->watch_shown, f->account, sizeof f->account);
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
