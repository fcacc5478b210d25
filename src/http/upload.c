/* Per-connection request bodies (upload.h). */
#include "http/upload.h"

#include <stdlib.h>

#include "core/buf.h"

#define KEEP_MAX (256u << 10)
#define CHUNKED_STEP (64u << 10) /* a chunked body's first share of the budget */

struct bd_upload {
    bd_buf body; /* its max is what the budget gave: it never holds more */
    bd_upload_budget *budget;
    size_t cap;  /* the request's limit; 0: the body is discarded */
    size_t held; /* bytes of the budget this request holds */
    bd_upload_state state;
    bool any; /* a body arrived, even an empty chunk's worth */
};

bd_upload *bd_upload_new(bd_upload_budget *budget)
{
    bd_upload *u = calloc(1, sizeof *u);
    if (u) {
        bd_buf_init(&u->body, 0);
        u->budget = budget;
    }
    return u;
}

void bd_upload_free(bd_upload *u)
{
    if (!u)
        return;
    bd_upload_budget_give(u->budget, u->held);
    bd_buf_free(&u->body);
    free(u);
}

bool bd_upload_expect(bd_upload *u, size_t cap, size_t announced)
{
    if (announced && !bd_upload_budget_take(u->budget, announced))
        return false;
    u->cap = cap;
    u->held = announced;
    u->body.max = announced;
    return true;
}

/* Takes more of the budget for a body that needs `need` bytes (<= its cap): twice what it
 * holds (or the first step) up to its cap, or else need alone. */
static bool grow(bd_upload *u, size_t need)
{
    size_t want = u->held ? u->held * 2 : CHUNKED_STEP;
    if (want < need)
        want = need;
    if (want > u->cap)
        want = u->cap;
    if (!bd_upload_budget_take(u->budget, want - u->held)) {
        if (want == need || !bd_upload_budget_take(u->budget, need - u->held))
            return false;
        want = need;
    }
    u->held = want;
    u->body.max = want;
    return true;
}

void bd_upload_take(bd_upload *u, const char *data, size_t n)
{
    if (!u->cap)
        return;
    u->any = true;
    if (u->state != BD_UPLOAD_WHOLE)
        return;
    if (n > u->cap - u->body.len) {
        u->state = BD_UPLOAD_TOO_LARGE;
        return;
    }
    if (u->body.len + n > u->held && !grow(u, u->body.len + n)) {
        u->state = BD_UPLOAD_NO_ROOM;
        return;
    }
    if (bd_buf_append(&u->body, data, n) != BD_OK)
        u->state = BD_UPLOAD_TOO_LARGE;
}

bd_slice bd_upload_body(const bd_upload *u, bd_upload_state *state)
{
    *state = u->state;
    if (!u->any)
        return (bd_slice){NULL, 0};
    return (bd_slice){u->body.data ? u->body.data : "", u->body.len};
}

void bd_upload_done(bd_upload *u)
{
    bd_upload_budget_give(u->budget, u->held);
    u->held = 0;
    u->cap = 0;
    u->body.max = 0;
    u->state = BD_UPLOAD_WHOLE;
    u->any = false;
    if (u->body.cap > KEEP_MAX)
        bd_buf_free(&u->body);
    else
        bd_buf_reset(&u->body);
}
