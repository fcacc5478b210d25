/* Growable byte buffer with a hard maximum size, so a buffer fed by outside input can never
 * grow without bound. The buffer owns its storage; bd_buf_free releases it. The contents are
 * always followed by a NUL byte (not counted in len), so data can be read as a C string. */
#ifndef BD_CORE_BUF_H
#define BD_CORE_BUF_H

#include <stddef.h>
#include <stdint.h>

#include "core/result.h"
#include "core/slice.h"

typedef struct {
    char *data;
    size_t len;
    size_t cap;
    size_t max; /* largest len allowed */
} bd_buf;

/* Prepares an empty buffer that refuses to hold more than max bytes. Allocates nothing. */
void bd_buf_init(bd_buf *b, size_t max);
void bd_buf_free(bd_buf *b);
/* Empties the buffer, keeping its storage for reuse. */
void bd_buf_reset(bd_buf *b);
/* Cuts the contents back to their first len bytes (nothing when it holds no more). */
void bd_buf_truncate(bd_buf *b, size_t len);

/* Makes room for n more bytes (and the trailing NUL) without changing the contents, for a
 * writer that fills data + len itself (then sets len and the NUL). BD_ERR_LIMIT past max,
 * BD_ERR_NOMEM when allocation fails. */
bd_result bd_buf_reserve(bd_buf *b, size_t n);

/* Appenders: BD_ERR_LIMIT past max, BD_ERR_NOMEM when allocation fails; on error the buffer
 * keeps what it held before the call. */
bd_result bd_buf_append(bd_buf *b, const void *p, size_t n);
bd_result bd_buf_append_str(bd_buf *b, const char *s);
bd_result bd_buf_append_char(bd_buf *b, char c);
bd_result bd_buf_append_slice(bd_buf *b, bd_slice s);
bd_result bd_buf_append_i64(bd_buf *b, int64_t v);
/* Writes v in decimal into out (24 bytes, NUL-terminated at its end) and returns where the
 * text starts: for hot paths where snprintf costs too much. */
const char *bd_i64_text(int64_t v, char out[24]);
bd_result bd_buf_printf(bd_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
