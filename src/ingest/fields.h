/* A parsed import record: up to BD_FIELDS_MAX named values, as the JSONL and CSV parsers
 * produce them. The object owns copies of every name and value, kept in one growable buffer
 * with a hard cap (no allocation per field), and is meant to be cleared and reused for every
 * record. Pointers and slices it hands out stay valid until the next add, clear or free. */
#ifndef BD_INGEST_FIELDS_H
#define BD_INGEST_FIELDS_H

#include <stdbool.h>
#include <stddef.h>

#include "core/result.h"
#include "core/slice.h"

#define BD_FIELDS_MAX 64
/* Cap on the bytes of all names and values of one record (a record comes from at most a
 * 1 MiB line, so this is never reached by a valid record). */
#define BD_FIELDS_BYTES_MAX (2u * 1024 * 1024)

typedef struct bd_fields bd_fields;

/* Returns an empty record, or NULL when out of memory. */
bd_fields *bd_fields_new(void);
/* Frees f and everything it holds; NULL is a no-op. */
void bd_fields_free(bd_fields *f);
/* Removes every field, keeping the storage for the next record. */
void bd_fields_clear(bd_fields *f);

/* Appends a field. name must be non-empty and hold no NUL byte (BD_ERR_INVALID otherwise);
 * value may hold NUL bytes, its length is kept exact; value NULL records a null value (the
 * name is listed, bd_fields_get reports it absent). BD_ERR_LIMIT past BD_FIELDS_MAX fields or
 * BD_FIELDS_BYTES_MAX bytes, BD_ERR_NOMEM when allocation fails; f is unchanged on error.
 * Names are not checked for duplicates: the parsers do that. */
bd_result bd_fields_add(bd_fields *f, const char *name, size_t name_len, const char *value,
                        size_t value_len);
/* Appends bytes to the value of the field added last, which must not be null, so a value can
 * be built in pieces. Same errors as bd_fields_add; on error the value is as before the call. */
bd_result bd_fields_append(bd_fields *f, const char *p, size_t n);

/* true and *v set when `name` is present with a non-null value (JSON null and absent both ->
 * false; an empty string is present with len 0). v->ptr is also NUL-terminated after v->len
 * bytes. Names compare case-sensitively. */
bool bd_fields_get(const bd_fields *f, const char *name, bd_slice *v);
/* Whether a field, null or not, is named by the len bytes at name: a parser's test for a
 * name given twice. */
bool bd_fields_has(const bd_fields *f, const char *name, size_t len);
/* Number of fields, null ones included, in input order. */
size_t bd_fields_count(const bd_fields *f);
/* Name of field i (i < count), NUL-terminated. */
const char *bd_fields_name(const bd_fields *f, size_t i);
/* Value of field i (i < count): true and *v set, or false when it is null. */
bool bd_fields_value(const bd_fields *f, size_t i, bd_slice *v);

#endif
