/* Column maps for CSV/TSV imports (breachctl import --map 'Email=email,Pass=password'):
 * which source column feeds which of our fields, and what becomes of the other columns.
 * A map owns copies of its names; a plan is a plain array the caller owns. */
#ifndef BD_INGEST_COLMAP_H
#define BD_INGEST_COLMAP_H

#include <stdbool.h>
#include <stddef.h>

#include "core/buf.h"
#include "core/result.h"
#include "ingest/csv.h"
#include "ingest/fields.h"

typedef struct bd_colmap bd_colmap;

/* Parses "Source=field[,Source=field...]": each pair names a source column (any bytes but
 * ',', '=' and NUL; surrounding spaces dropped) and a field (the same). Returns BD_OK with
 * *out set; BD_ERR_INVALID (why set) for an empty spec, a pair without '=', an empty name, a
 * source or field named twice, or more than BD_FIELDS_MAX pairs; BD_ERR_NOMEM. */
bd_result bd_colmap_parse(const char *spec, bd_colmap **out, char *why, size_t whylen);
/* Frees m; NULL is a no-op. */
void bd_colmap_free(bd_colmap *m);
size_t bd_colmap_count(const bd_colmap *m);
const char *bd_colmap_source(const bd_colmap *m, size_t i);
const char *bd_colmap_field(const bd_colmap *m, size_t i);

/* What a plan does with one column. */
enum { BD_COL_SAME = -1, BD_COL_OTHER = -2, BD_COL_DROP = -3 };

/* Plans the columns of header h: plan[i] is the map pair feeding column i's field (>= 0),
 * BD_COL_SAME for an unmapped column named like a field of `fields` (kept under its name),
 * else BD_COL_DROP with drop_unmapped, else BD_COL_OTHER (into other_attributes).
 * m may be NULL (no pairs). Returns BD_OK; BD_ERR_INVALID (why set) when a map field is not
 * one of `fields` (a NULL-terminated list), a map source is not a column of h, two columns
 * would feed one field, or columns go to other_attributes where there is none or where a
 * column already feeds it. */
bd_result bd_colmap_plan(const bd_colmap *m, const bd_csv_header *h, const char *const *fields,
                         bool drop_unmapped, int plan[BD_FIELDS_MAX], char *why, size_t whylen);

/* Replaces out with the row `in` (parsed against h) carried through plan: mapped and kept
 * columns under their field names, BD_COL_OTHER columns (null ones skipped) as one
 * "other_attributes" JSON object of strings built in scratch ({"Column":"value"}), dropped
 * ones left out. BD_ERR_LIMIT or BD_ERR_NOMEM from the buffers. */
bd_result bd_colmap_apply(const bd_colmap *m, const bd_csv_header *h, const int *plan,
                          const bd_fields *in, bd_fields *out, bd_buf *scratch);

#endif
