/* A bulk job's stored results (result_blob.h): what the runner writes per chunk. */
#include "jobs/result_blob.h"

static bd_result put_le(bd_buf *out, uint64_t v, int bytes)
{
    uint8_t b[8];
    for (int i = 0; i < bytes; i++)
        b[i] = (uint8_t)(v >> (8 * i));
    return bd_buf_append(out, b, (size_t)bytes);
}

bd_result bd_job_results_add(bd_buf *out, bd_slice account, int64_t found, const int64_t *ids,
                             uint32_t n)
{
    bd_result r = put_le(out, account.ptr ? account.len : 0xFFFF, 2);
    if (r == BD_OK && account.ptr)
        r = bd_buf_append(out, account.ptr, account.len);
    if (r == BD_OK)
        r = put_le(out, (uint64_t)found, 8);
    if (r == BD_OK)
        r = put_le(out, n, 4);
    for (uint32_t i = 0; r == BD_OK && i < n; i++)
        r = put_le(out, (uint64_t)ids[i], 8);
    return r;
}

bool bd_job_blob_get_le(const uint8_t **p, const uint8_t *end, int bytes, uint64_t *v)
{
    if (end - *p < bytes)
        return false;
    *v = 0;
    for (int i = 0; i < bytes; i++)
        *v |= (uint64_t)(*p)[i] << (8 * i);
    *p += bytes;
    return true;
}
