/* Fuzz target: the parsers of watches and webhooks. The first byte picks one: a webhook URL
 * (bd_webhook_url_parse), a --webhook-allow range (bd_webhook_allow), or a watch's type and
 * value (bd_watch_spec_parse; the second byte splits type from value). A URL taken has a
 * host without '/', '@' or spaces and a port in 1..65535; a refused one says why; a watch
 * value taken, given again, gives the same key (normal forms are fixed points). */
#include <stdint.h>
#include <string.h>

#include "ingest/watch_spec.h"
#include "webhook/policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void url(const char *p, size_t n)
{
    bd_webhook_url u;
    const char *why = NULL;
    if (bd_webhook_url_parse((bd_slice){p, n}, &u, &why) != BD_OK) {
        if (!why)
            __builtin_trap();
        return;
    }
    size_t hl = strlen(u.host);
    if (hl == 0 || hl >= sizeof u.host || strpbrk(u.host, "/@ ?#") || u.port < 1 ||
        u.port > 65535 || n > BD_WEBHOOK_URL_MAX)
        __builtin_trap();
}

static void cidr(const char *p, size_t n)
{
    char text[128];
    if (n >= sizeof text)
        return;
    memcpy(text, p, n);
    text[n] = '\0';
    bd_webhook_policy pol = {0};
    if (bd_webhook_allow(&pol, text) && (pol.nallow != 1 || pol.allow[0].bits > 128))
        __builtin_trap();
}

static void spec(const char *p, size_t n)
{
    if (n < 1)
        return;
    size_t split = (uint8_t)p[0] % n;
    bd_slice type = {p + 1, split > 0 ? split - 1 : 0};
    bd_slice value = {p + 1 + type.len, n - 1 - type.len};
    static const uint8_t secret[BD_SECRET_LEN] = {7};
    bd_watch_spec w, again;
    const char *why = NULL;
    if (bd_watch_spec_parse(secret, type, value, &w, &why) != BD_OK) {
        if (!why)
            __builtin_trap();
        return;
    }
    if (w.key_len > BD_WATCH_KEY_MAX || w.key[w.key_len] != '\0' || w.shown[w.shown_len] != '\0')
        __builtin_trap();
    if (w.type == BD_FIELD_PASSWORD || w.type == BD_FIELD_SSN)
        return; /* kept as a hash: nothing to give again */
    if (bd_watch_spec_parse(secret, type, (bd_slice){w.key, w.key_len}, &again, &why) != BD_OK ||
        again.key_len != w.key_len || memcmp(again.key, w.key, w.key_len) != 0)
        __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    const char *p = (const char *)data + 1;
    size_t n = size - 1;
    switch (data[0] % 3) {
    case 0:
        url(p, n);
        break;
    case 1:
        cidr(p, n);
        break;
    default:
        spec(p, n);
        break;
    }
    return 0;
}
