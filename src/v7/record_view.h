/* A breach record as the v7 API shows it, for every reply that holds records (breach-search
 * pages in JSON or CSV, bulk job results): the severity's name and the breached_data
 * object. It writes with the JSON writer and knows nothing of requests. */
#ifndef BD_V7_RECORD_VIEW_H
#define BD_V7_RECORD_VIEW_H

#include "core/json.h"
#include "store/store.h"

/* "Low", "Medium" or "High" (anything else is "Low"). */
const char *bd_severity_name(bd_severity s);
/* Writes a record's breached_data object, as breach-search does: a field with no value is
 * null, never "". */
void bd_write_breached_data(bd_json *w, const bd_record_row *r);

#endif
