/* libFuzzer target: arbitrary bytes as a combo-list line, a stealer-log line and a sample for
 * separator detection. Checks the slices the splitters return lie inside the line, in order,
 * non-empty, and that the combo split is at the first separator (the password kept whole). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/combo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void inside(bd_slice s, const char *p, size_t n)
{
    if (!s.ptr || s.ptr < p || s.ptr + s.len > p + n)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *p = (const char *)data;
    bd_slice line = {p, size}, login, pw, site;
    static const char seps[] = BD_COMBO_SEPARATORS;
    for (size_t k = 0; k < sizeof seps - 1; k++) {
        if (bd_combo_split(line, seps[k], &login, &pw))
            continue;
        inside(login, p, size);
        inside(pw, p, size);
        if (login.len == 0 || pw.len == 0 || memchr(login.ptr, seps[k], login.len) ||
            login.ptr[login.len] != seps[k] || pw.ptr != login.ptr + login.len + 1)
            abort();
        bd_combo_login_field(login);
    }
    if (!bd_stealer_split(line, &site, &login, &pw)) {
        inside(site, p, size);
        inside(login, p, size);
        inside(pw, p, size);
        if (site.len == 0 || login.len == 0 || pw.len == 0 || site.ptr + site.len > login.ptr ||
            login.ptr + login.len >= pw.ptr)
            abort();
        char sep = login.ptr[-1];
        if (!strchr(":| \t", sep) || login.ptr[login.len] != sep ||
            memchr(login.ptr, sep, login.len))
            abort();
    }
    char sep = bd_combo_detect_separator(p, size);
    if (sep && (!strchr(seps, sep) || !memchr(p, sep, size)))
        abort();
    return 0;
}
