/* What an alert is sent as, besides the signed JSON of payload.h (store.h bd_watch_format):
 *  - slack: a Slack incoming-webhook message: "text" (the notification's one line) and Block
 *    Kit "blocks" (a header; a section of fields: identity type, masked account, breach,
 *    date, count; a button to the console when breachd knows its address; the event id);
 *  - teams: a Microsoft Teams workflow ("Post to a channel when a webhook request is
 *    received") message: {"type":"message","attachments":[an Adaptive Card 1.4]} with the
 *    same facts and an Action.OpenUrl to the console;
 *  - splunk-hec: a Splunk HTTP Event Collector event: time, source "breachd", sourcetype
 *    "breachd:alert", and the alert object of payload.h as "event" (the watch's secret is the
 *    HEC token, sent as "Authorization: Splunk TOKEN").
 * A chat channel is read by more people than a receiver's pipeline: Slack and Teams show
 * the account masked (bd_alert_account_masked) and not the matched identities; the HEC
 * event, going to the organisation's own SIEM, is the whole alert, as the JSON webhook is.
 * Where a watch's URL carries the receiver's token (Slack and Teams URLs do), lists show only
 * its scheme and host (bd_watch_url_shown). */
#ifndef BD_WEBHOOK_FORMATS_H
#define BD_WEBHOOK_FORMATS_H

#include <stdbool.h>
#include <stddef.h>

#include "core/json.h"
#include "core/slice.h"
#include "store/store.h"

/* "json", "slack", "teams", "splunk-hec"; and back (false for any other text). */
const char *bd_watch_format_name(int format);
bool bd_watch_format_parse(bd_slice s, int *format);

/* Whether a watch of this format needs a secret: json (its signing secret) and splunk-hec
 * (its HEC token) do; slack and teams (the URL is the credential) take none. */
bool bd_watch_format_needs_secret(int format);

/* The account as a chat message shows it: an email as its first character, "***" and
 * "@domain"; a phone number, user name or IP address as its first character, "***" and its
 * last two; anything else (domains, BINs, hashes, the masked password or SSN) as shown.
 * Written NUL-terminated into out (cap >= 8), cut at cap - 1 bytes. */
void bd_alert_account_masked(int watch_type, bd_slice shown, char *out, size_t cap);

/* The bodies. console_url: the console's address for the link (NULL: no link). */
void bd_alert_write_slack(bd_json *w, const bd_alert_row *a, const char *console_url);
void bd_alert_write_teams(bd_json *w, const bd_alert_row *a, const char *console_url);
void bd_alert_write_hec(bd_json *w, const bd_alert_row *a);

/* A watch's URL as lists and replies show it: as given for json and splunk-hec; for slack
 * and teams (whose URL path and query are the receiver's token) the scheme and host, then
 * "/...". Points into url, or writes into out (cap >= 16) and points there. */
bd_slice bd_watch_url_shown(int format, bd_slice url, char *out, size_t cap);

#endif
