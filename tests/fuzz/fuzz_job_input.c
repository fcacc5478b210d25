/* libFuzzer target: arbitrary bytes as a bulk job's body (v7/job_input.h) in each of its
 * three formats, the first byte choosing whether a type parameter is given. Checks that every
 * identity handed on lies within the body or the parser's own scratch, that the count agrees
 * with the calls, that no more than BD_JOB_MAX_IDENTITIES are handed on, that a refusal
 * carries a sentence, and that a text body's identities never hold a line break. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "v7/job_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct {
    size_t calls;
    bd_job_input_format fmt;
    const char *body;
    size_t len;
} seen;

static int take(void *ctx, size_t index, bd_slice v)
{
    seen *s = ctx;
    if (index != s->calls++ || (v.len && !v.ptr))
        abort();
    if (v.len) { /* touch every byte: a slice past its buffer shows under ASan */
        volatile char sum = 0;
        for (size_t i = 0; i < v.len; i++)
            sum ^= v.ptr[i];
        (void)sum;
    }
    if (s->fmt == BD_JOB_INPUT_TEXT &&
        (v.len == 0 || memchr(v.ptr, '\n', v.len) || v.ptr < s->body || v.ptr + v.len > s->body + s->len))
        abort();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    bd_slice type = (data[0] & 1) ? (bd_slice){"email", 5} : (bd_slice){NULL, 0};
    bd_slice body = {(const char *)data + 1, size - 1};
    for (int f = BD_JOB_INPUT_JSON; f <= BD_JOB_INPUT_TEXT; f++) {
        seen s = {0, (bd_job_input_format)f, body.ptr, body.len};
        char type_out[BD_JOB_TYPE_MAX];
        char why[200];
        size_t count = 99;
        bd_result r = bd_job_input_read(body, (bd_job_input_format)f, type, type_out, take, &s,
                                        &count, why, sizeof why);
        if (count != s.calls || count > BD_JOB_MAX_IDENTITIES)
            abort();
        if (r == BD_ERR_INVALID && why[0] == '\0')
            abort();
        if (r == BD_OK && strlen(type_out) >= BD_JOB_TYPE_MAX)
            abort();
    }
    return 0;
}
