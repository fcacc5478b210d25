/* What every backend's record search SQL has in common (record_sql.h). */
#include "store/record_sql.h"

/* Column holding each field's lookup key, in bd_field order. */
static const char *const FIELD_COL[BD_FIELD_COUNT] = {
    "email",    "email_domain",  "phone_key",     "user_name_key",   "ip_address",
    "ssn_hmac", "password_hmac", "password_hash", "bitcoin_address", "website_domain",
};

const char *bd_record_key_col(bd_field f)
{
    return FIELD_COL[f];
}

bd_result bd_record_filters_sql(bd_buf *b, const bd_record_query *q, bd_record_param_fn param,
                                void *ctx)
{
    bd_result r = BD_OK;
    for (int f = 0; f < BD_FIELD_COUNT && r == BD_OK; f++) {
        switch (q->filter[f].mode) {
        case BD_FILTER_NONE:
            break;
        case BD_FILTER_PRESENT:
            r = bd_buf_printf(b, " AND r.%s IS NOT NULL", FIELD_COL[f]);
            break;
        case BD_FILTER_ABSENT:
            r = bd_buf_printf(b, " AND r.%s IS NULL", FIELD_COL[f]);
            break;
        case BD_FILTER_EQUALS:
            r = bd_buf_printf(b, " AND r.%s = ", FIELD_COL[f]);
            if (r == BD_OK)
                r = param(ctx, b, (bd_field)f);
            break;
        }
    }
    return r;
}

bd_result bd_record_scope_sql(bd_buf *b, const char *alias, const char *tenant, bool has_right)
{
    return bd_buf_printf(b,
                         " AND EXISTS (SELECT 1 FROM tenant_domains td WHERE td.tenant_id = %s"
                         " AND (%s.email_domain = td.domain OR %s%s.email_domain, %slength(td.domain)"
                         " + 1%s) = '.' || td.domain))",
                         tenant, alias, has_right ? "right(" : "substr(", alias,
                         has_right ? "" : "-(", has_right ? "" : ")");
}
