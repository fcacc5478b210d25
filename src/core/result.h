/* One result type for the whole project: every function that can fail returns a bd_result. */
#ifndef BD_CORE_RESULT_H
#define BD_CORE_RESULT_H

typedef enum {
    BD_OK = 0,
    BD_ERR_NOMEM,     /* an allocation failed */
    BD_ERR_LIMIT,     /* a capped buffer or input limit was exceeded */
    BD_ERR_INVALID,   /* input is not acceptable (the caller holds the reason) */
    BD_ERR_NOT_FOUND, /* the thing looked up does not exist */
    BD_ERR_EXISTS,    /* the thing to create already exists */
    BD_ERR_IO,        /* a file or socket operation failed */
    BD_ERR_STORE,     /* the storage backend failed */
    BD_ERR_BUSY,      /* the store is locked or unreachable; retrying may help */
    BD_ERR_CRYPTO,    /* a cryptographic primitive failed */
    BD_ERR_READONLY,  /* the store takes no writes here (a hot standby); retrying will not help */
    BD_ERR_CONFLICT,  /* the change clashes with what the store holds (a name or domain taken,
                         a tenant still holding keys) */
    BD_ERR_UNSUPPORTED, /* this build or backend does not offer the operation */
} bd_result;

/* Returns a short constant description of r; never NULL. */
const char *bd_result_str(bd_result r);

#include <stddef.h>

/* Writes a reason sentence into the caller's why buffer (nothing when why is NULL or
 * whylen is 0): the convention every parser here uses to explain a refusal. */
void bd_why(char *why, size_t whylen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
