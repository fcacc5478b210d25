/* A breach record as the v7 API shows it (record_view.h). */
#include "v7/record_view.h"

const char *bd_severity_name(bd_severity s)
{
    return s == BD_SEVERITY_HIGH ? "High" : s == BD_SEVERITY_MEDIUM ? "Medium" : "Low";
}

/* breached_data: a field with no value is null, never "". */
#define OPT(w, key, v) BD_JSON_MEMBER_STRING(w, key, v, true)

void bd_write_breached_data(bd_json *w, const bd_record_row *r)
{
    bd_json_object_begin(w);
    OPT(w, "user_name", r->user_name);
    OPT(w, "first_name", r->first_name);
    OPT(w, "last_name", r->last_name);
    OPT(w, "email", r->email);
    OPT(w, "email_domain", r->email_domain);
    OPT(w, "phone_number", r->phone_number);
    OPT(w, "ip_address", r->ip_address);
    OPT(w, "bitcoin_address", r->bitcoin_address);
    OPT(w, "password", r->password_masked);
    OPT(w, "password_hash", r->password_hash);
    OPT(w, "other_attributes", r->other_attributes);
    OPT(w, "social_security_number", r->ssn_masked);
    BD_JSON_KEY(w, "severity");
    bd_json_cstring(w, bd_severity_name(r->severity));
    bd_json_object_end(w);
}
