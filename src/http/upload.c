/* Per-connection request bodies (upload.h). */
#include "http/upload.h"

#include <stdlib.h>

#include "core/buf.h"

#define KEEP_MAX (256u << 10)

struct bd_upload {
    bd_buf body;
    bool too_large;
    bool any; /* a body arrived, even an empty chunk's worth */
};

bd_upload *bd_upload_new(void)
{
    bd_upload *u = calloc(1, sizeof *u);
    if (u)
        bd_buf_init(&u->body, BD_UPLOAD_MAX);
    return u;
}

void bd_upload_free(bd_upload *u)
{
    if (!u)
        return;
    bd_buf_free(&u->body);
    free(u);
}

void bd_upload_take(bd_upload *u, const char *data, size_t n)
{
    u->any = true;
    if (!u->too_large && bd_buf_append(&u->body, data, n) != BD_OK)
        u->too_large = true;
}

bd_slice bd_upload_body(const bd_upload *u, bool *too_large)
{
    *too_large = u->too_large;
    if (!u->any)
        return (bd_slice){NULL, 0};
    return (bd_slice){u->body.data ? u->body.data : "", u->body.len};
}

void bd_upload_done(bd_upload *u)
{
    u->too_large = false;
    u->any = false;
    if (u->body.cap > KEEP_MAX)
        bd_buf_free(&u->body);
    else
        bd_buf_reset(&u->body);
}
