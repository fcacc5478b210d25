/* libFuzzer target: arbitrary bytes through the decompressing source (every kind is reached
 * by its magic bytes), read in small pieces. Checks it ends (with BD_OK or BD_ERR_IO) without
 * crashing, and that a plain input comes back byte for byte. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ingest/source.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int fds[2];
    if (size > 60000 || pipe(fds) != 0) /* a pipe holds 64 KiB: written whole before reading */
        return 0;
    if (write(fds[1], data, size) != (ssize_t)size)
        abort();
    close(fds[1]);
    bd_source *s;
    char why[256];
    if (bd_source_open(fds[0], true, &s, why, sizeof why) != BD_OK) {
        close(fds[0]);
        return 0;
    }
    bool plain = bd_source_kind_of(s) == BD_SRC_PLAIN;
    static char out[1 << 20];
    size_t total = 0, got;
    bd_result r;
    while (
        (r = bd_source_read(s, out + total, total + 4096 < sizeof out ? 4096 : sizeof out - total,
                            &got, why, sizeof why)) == BD_OK &&
        got) {
        total += got;
        if (total == sizeof out)
            break; /* a bomb: enough */
    }
    if (plain && (r != BD_OK || total != size || memcmp(out, data, size) != 0))
        abort();
    bd_source_close(s);
    return 0;
}
