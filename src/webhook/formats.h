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
 * email: a mail through breachd's SMTP server (send.h bd_webhook_mail) to the watch's
 * "mailto:ADDRESS", masked like the chat formats.
 * Where a watch's URL carries the receiver's token (Slack and Teams URLs do), lists show only
 * its scheme and host (bd_watch_url_shown). */
#ifndef BD_WEBHOOK_FORMATS_H
#define BD_WEBHOOK_FORMATS_H

#include <stdbool.h>
#include <stddef.h>

#include "core/buf.h"
#include "core/json.h"
#include "core/slice.h"
#include "store/store.h"

/* "json", "slack", "teams", "splunk-hec", "email"; and back (false for any other text). */
const char *bd_watch_format_name(int format);
bool bd_watch_format_parse(bd_slice s, int *format);

/* Whether a watch of this format needs a secret: json (its signing secret) and splunk-hec
 * (its HEC token) do; slack and teams (the URL is the credential) and email take none. */
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

/* An email watch's url, "mailto:ADDRESS" (one address of at most 254 bytes: printable ASCII,
 * one '@' with text either side, none of <>()[]\,;:"?&% ): *address points into url. Else
 * BD_ERR_INVALID with *why (a constant sentence). */
bd_result bd_watch_mailto_parse(bd_slice url, bd_slice *address, const char **why);

/* The mail of an alert, appended to out: From (breachd <from>), To, Subject (the summary line;
 * RFC 2047 words of at most 75 characters, folded, when it is not ASCII), Date, Message-ID and
 * X-Breachd-Event-Id from the event id, and a multipart/alternative body (boundary
 * "breachd-" and the event id) of a plain-text and an HTML part (escaped) with the facts of
 * the chat formats, the account masked, the console's link when console_url is not NULL.
 * Lines end in CRLF; a breach name's control characters are spaces. BD_ERR_NOMEM when out
 * cannot grow. */
bd_result bd_alert_write_mail(bd_buf *out, const bd_alert_row *a, const char *from, bd_slice to,
                              const char *console_url);

/* A watch's URL as lists and replies show it: as given for json and splunk-hec; for slack
 * and teams (whose URL path and query are the receiver's token) the scheme and host, then
 * "/...". Points into url, or writes into out (cap >= 16) and points there. */
bd_slice bd_watch_url_shown(int format, bd_slice url, char *out, size_t cap);

#endif
