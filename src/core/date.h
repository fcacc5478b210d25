/* Calendar dates and date-times as the interface writes them. Parsers validate the calendar
 * (no 31-Apr, 29-Feb only in leap years) and accept years 1900..2199. */
#ifndef BD_CORE_DATE_H
#define BD_CORE_DATE_H

#include <stdbool.h>

#include "core/slice.h"

typedef struct {
    int y, m, d;    /* calendar date */
    int hh, mi, ss; /* 0 when only a date was given */
} bd_datetime;

/* Each parser returns true and fills *out only when s is exactly of its form. */
bool bd_date_parse_iso(bd_slice s, bd_datetime *out); /* YYYY-MM-DD */
bool bd_date_parse_dmy(bd_slice s, bd_datetime *out); /* DD-Mon-YYYY, month any case */
bool bd_datetime_parse(bd_slice s, bd_datetime *out); /* YYYY-MM-DD[ T]HH:MM:SS */
int bd_days_in_month(int y, int m);

/* Formatters write a NUL-terminated string into out. */
void bd_date_format_iso(const bd_datetime *t, char out[11]); /* 2013-10-04 */
void bd_date_format_dmy(const bd_datetime *t, char out[12]); /* 04-Oct-2013 */
void bd_datetime_format(const bd_datetime *t, char out[20]); /* 2013-10-04 08:30:00 */

/* Converts a stored ISO date (YYYY-MM-DD) to DD-Mon-YYYY; false when iso is not a date. */
bool bd_date_iso_to_dmy(bd_slice iso, char out[12]);

#endif
