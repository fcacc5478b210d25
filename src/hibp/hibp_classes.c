/* leaked_data_types tokens -> Have I Been Pwned data classes. */
#include "hibp/hibp_classes.h"

#include <string.h>
#include <strings.h>

/* Our tokens (and their common spellings) and HIBP's wording for them. */
static const struct {
    const char *token, *name;
} TABLE[] = {
    {"email", "Email addresses"},
    {"email_address", "Email addresses"},
    {"email_domain", "Email addresses"},
    {"password", "Passwords"},
    {"password_hash", "Password hashes"},
    {"username", "Usernames"},
    {"user_name", "Usernames"},
    {"ip_address", "IP addresses"},
    {"ipaddress", "IP addresses"},
    {"phone_number", "Phone numbers"},
    {"phonenumber", "Phone numbers"},
    {"phone", "Phone numbers"},
    {"name", "Names"},
    {"first_name", "Names"},
    {"last_name", "Names"},
    {"full_name", "Names"},
    {"social_security_number", "Social security numbers"},
    {"ssn", "Social security numbers"},
    {"bitcoin_address", "Cryptocurrency wallet addresses"},
    {"date_of_birth", "Dates of birth"},
    {"dob", "Dates of birth"},
    {"address", "Physical addresses"},
    {"physical_address", "Physical addresses"},
    {"gender", "Genders"},
    {"credit_card", "Credit cards"},
    {"credit_cards", "Credit cards"},
    {"security_questions", "Security questions and answers"},
    {"geolocation", "Geographic locations"},
    {"job_title", "Job titles"},
    {"employer", "Employers"},
    {"website", "Website activity"},
};

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* The token's own words: '_', '-' and '.' become spaces, letters lower-case but the first. */
static size_t readable(bd_slice t, char out[BD_HIBP_CLASS_MAX + 1])
{
    size_t n = 0;
    bool space = false;
    for (size_t i = 0; i < t.len && n < BD_HIBP_CLASS_MAX; i++) {
        unsigned char c = (unsigned char)t.ptr[i];
        if (c == '_' || c == '-' || c == '.' || is_space((char)c) || c < 0x20 || c == 0x7f) {
            space = n > 0;
            continue;
        }
        if (space && n + 1 < BD_HIBP_CLASS_MAX)
            out[n++] = ' ';
        space = false;
        if (c >= 'A' && c <= 'Z')
            c = (unsigned char)(c - 'A' + 'a');
        if (n == 0 && c >= 'a' && c <= 'z')
            c = (unsigned char)(c - 'a' + 'A');
        out[n++] = (char)c;
    }
    out[n] = '\0';
    return n;
}

size_t bd_hibp_data_class(bd_slice token, char out[BD_HIBP_CLASS_MAX + 1])
{
    while (token.len && is_space(token.ptr[0])) {
        token.ptr++;
        token.len--;
    }
    while (token.len && is_space(token.ptr[token.len - 1]))
        token.len--;
    for (size_t i = 0; i < sizeof TABLE / sizeof TABLE[0]; i++) {
        size_t tl = strlen(TABLE[i].token);
        if (tl == token.len && strncasecmp(TABLE[i].token, token.ptr, tl) == 0) {
            size_t nl = strlen(TABLE[i].name);
            memcpy(out, TABLE[i].name, nl + 1);
            return nl;
        }
    }
    return readable(token, out);
}

/* Inserts name into the sorted set unless it is there or the set is full. */
static void insert(bd_hibp_classes *set, const char *name)
{
    size_t at = 0;
    while (at < set->n) {
        int c = strcmp(set->name[at], name);
        if (c == 0)
            return;
        if (c > 0)
            break;
        at++;
    }
    if (set->n == BD_HIBP_CLASSES_MAX)
        return;
    memmove(set->name[at + 1], set->name[at], (set->n - at) * sizeof set->name[0]);
    memcpy(set->name[at], name, strlen(name) + 1);
    set->n++;
}

void bd_hibp_classes_add(bd_hibp_classes *set, bd_slice list)
{
    size_t start = 0;
    for (size_t i = 0; i <= list.len; i++) {
        if (i < list.len && list.ptr[i] != ',' && list.ptr[i] != ';')
            continue;
        char name[BD_HIBP_CLASS_MAX + 1];
        if (bd_hibp_data_class((bd_slice){list.ptr + start, i - start}, name) > 0)
            insert(set, name);
        start = i + 1;
    }
}
