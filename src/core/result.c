/* Text for each bd_result code. */
#include "core/result.h"

#include <stdarg.h>
#include <stdio.h>

const char *bd_result_str(bd_result r)
{
    switch (r) {
    case BD_OK:
        return "ok";
    case BD_ERR_NOMEM:
        return "out of memory";
    case BD_ERR_LIMIT:
        return "limit exceeded";
    case BD_ERR_INVALID:
        return "invalid input";
    case BD_ERR_NOT_FOUND:
        return "not found";
    case BD_ERR_EXISTS:
        return "already exists";
    case BD_ERR_IO:
        return "input/output error";
    case BD_ERR_STORE:
        return "store error";
    case BD_ERR_BUSY:
        return "store busy or unavailable";
    case BD_ERR_CRYPTO:
        return "cryptographic failure";
    case BD_ERR_READONLY:
        return "store is read-only";
    case BD_ERR_CONFLICT:
        return "conflict";
    case BD_ERR_UNSUPPORTED:
        return "not supported";
    }
    return "unknown error";
}

void bd_why(char *why, size_t whylen, const char *fmt, ...)
{
    if (!why || whylen == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, whylen, fmt, ap);
    va_end(ap);
}
