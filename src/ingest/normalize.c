/* Normalisation of identity values: one small validator per type, all writing into a fixed buffer.
 */
#include "ingest/normalize.h"

#include <arpa/inet.h>
#include <string.h>

#include "ingest/mask.h"
#include "ingest/website.h"

static const struct {
    const char *name;
    bd_id_type type;
} type_names[] = {
    {"email", BD_ID_EMAIL},
    {"email_domain", BD_ID_EMAIL_DOMAIN},
    {"phone_number", BD_ID_PHONE},
    {"username", BD_ID_USERNAME},
    {"ip_address", BD_ID_IP},
    {"social_security_number", BD_ID_SSN},
    {"password", BD_ID_PASSWORD},
    {"password_hash", BD_ID_PASSWORD_HASH},
    {"bitcoin_address", BD_ID_BITCOIN},
    {"website_domain", BD_ID_WEBSITE_DOMAIN},
    /* spellings used by the interface spec's narrative */
    {"phonenumber", BD_ID_PHONE},
    {"ipaddress", BD_ID_IP},
};

bool bd_id_type_parse(bd_slice s, bd_id_type *out)
{
    for (size_t i = 0; i < sizeof type_names / sizeof type_names[0]; i++) {
        if (bd_slice_eq_nocase(s, type_names[i].name)) {
            *out = type_names[i].type;
            return true;
        }
    }
    return false;
}

const char *bd_id_type_name(bd_id_type t)
{
    /* the first BD_ID_COUNT rows of type_names are in enum order */
    if ((unsigned)t >= BD_ID_COUNT)
        return "";
    return type_names[t].name;
}

static const char why_nul[] = "the value must not contain a NUL byte";
static const char why_long[] = "the value is too long: at most 512 bytes are allowed";
static const char why_email[] = "an email address must look like name@example.com";
static const char why_domain[] = "an email domain must be a host name like example.com";
static const char why_phone[] =
    "a phone number must have 7 to 15 digits, separated only by spaces, +, -, (, ) or .";
static const char why_username[] =
    "a username must be valid UTF-8, not empty, without control characters";
static const char why_ip[] =
    "an IP address must be an IPv4 address like 192.0.2.1 or an IPv6 address like 2001:db8::1";
static const char why_ssn[] =
    "a social security number must have exactly 9 digits, optionally separated by dashes";
static const char why_password[] = "a password must not be empty";
static const char why_hash[] = "a password hash must not be empty or contain whitespace";
static const char why_bitcoin[] = "a bitcoin address must be 14 to 90 letters and digits";

static bool is_space(unsigned char c)
{
    return c == ' ' || (c >= '\t' && c <= '\r');
}

static bool is_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

static bool is_hex(unsigned char c)
{
    return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static bool is_alnum(unsigned char c)
{
    return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_control(unsigned char c)
{
    return c < 0x20 || c == 0x7f;
}

static char lower(unsigned char c)
{
    return (char)(c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c);
}

static bd_slice trim(bd_slice v)
{
    while (v.len && is_space((unsigned char)v.ptr[0])) {
        v.ptr++;
        v.len--;
    }
    while (v.len && is_space((unsigned char)v.ptr[v.len - 1]))
        v.len--;
    return v;
}

/* Checks a lower-cased host name in place and returns its length with one trailing '.'
 * dropped, or 0 when it is not a host name. */
static size_t host_name_len(const char *h, size_t n)
{
    if (n && h[n - 1] == '.')
        n--;
    if (n == 0 || n > 253)
        return 0;
    size_t labels = 0, label_len = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i == n || h[i] == '.') {
            if (label_len == 0 || label_len > 63 || h[i - 1] == '-')
                return 0;
            labels++;
            label_len = 0;
            continue;
        }
        unsigned char c = (unsigned char)h[i];
        if (c == '-') {
            if (label_len == 0)
                return 0;
        } else if (!is_digit(c) && !(c >= 'a' && c <= 'z')) {
            return 0;
        }
        label_len++;
    }
    return labels >= 2 ? n : 0;
}

/* Whether v is well-formed UTF-8. Text identities (emails, usernames) must be: a byte
 * string that is not text cannot be an address or a name, and could never be shown. */
static bool is_utf8(bd_slice v)
{
    for (size_t i = 0; i < v.len;) {
        size_t k = bd_utf8_seq_len((const unsigned char *)v.ptr + i, v.len - i);
        if (k == 0)
            return false;
        i += k;
    }
    return true;
}

/* Copies v lower-cased into out (which has room for v.len + 1 bytes). */
static void copy_lower(bd_slice v, char *out)
{
    for (size_t i = 0; i < v.len; i++)
        out[i] = lower((unsigned char)v.ptr[i]);
    out[v.len] = '\0';
}

static const char *norm_email(bd_slice v, char *out, size_t *out_len)
{
    v = trim(v);
    if (!is_utf8(v))
        return why_email;
    copy_lower(v, out);
    const char *at = memchr(out, '@', v.len);
    if (!at || at == out || memchr(at + 1, '@', v.len - (size_t)(at + 1 - out)))
        return why_email;
    for (const char *p = out; p < at; p++) {
        if (*p == ' ' || is_control((unsigned char)*p))
            return why_email;
    }
    size_t domain_len = host_name_len(at + 1, v.len - (size_t)(at + 1 - out));
    if (domain_len == 0)
        return why_email;
    *out_len = (size_t)(at + 1 - out) + domain_len;
    out[*out_len] = '\0';
    return NULL;
}

static const char *norm_email_domain(bd_slice v, char *out, size_t *out_len)
{
    v = trim(v);
    if (v.len && v.ptr[0] == '@') {
        v.ptr++;
        v.len--;
    }
    copy_lower(v, out);
    *out_len = host_name_len(out, v.len);
    if (*out_len == 0)
        return why_domain;
    out[*out_len] = '\0';
    return NULL;
}

static const char *norm_phone(bd_slice v, char *out, size_t *out_len)
{
    v = trim(v);
    size_t n = 0;
    for (size_t i = 0; i < v.len; i++) {
        unsigned char c = (unsigned char)v.ptr[i];
        if (is_digit(c)) {
            if (n == 15)
                return why_phone;
            out[n++] = (char)c;
        } else if (c == 0 || !strchr(" +-().", c)) {
            return why_phone;
        }
    }
    if (n < 7)
        return why_phone;
    out[n] = '\0';
    *out_len = n;
    return NULL;
}

static const char *norm_username(bd_slice v, char *out, size_t *out_len)
{
    v = trim(v);
    if (v.len == 0 || !is_utf8(v))
        return why_username;
    for (size_t i = 0; i < v.len; i++) {
        if (is_control((unsigned char)v.ptr[i]))
            return why_username;
    }
    copy_lower(v, out);
    *out_len = v.len;
    return NULL;
}

/* An IPv4 address's canonical text: what inet_ntop writes, without the sprintf glibc's
 * inet_ntop formats each part with (2% of the checking thread in a 1M-record import). */
static size_t ipv4_text(const unsigned char a[4], char *out)
{
    char *p = out;
    for (int i = 0; i < 4; i++) {
        unsigned b = a[i];
        if (i)
            *p++ = '.';
        if (b >= 100)
            *p++ = (char)('0' + b / 100);
        if (b >= 10)
            *p++ = (char)('0' + b / 10 % 10);
        *p++ = (char)('0' + b % 10);
    }
    *p = '\0';
    return (size_t)(p - out);
}

static const char *norm_ip(bd_slice v, char *out, size_t *out_len)
{
    v = trim(v);
    char text[INET6_ADDRSTRLEN];
    if (v.len == 0 || v.len >= sizeof text)
        return why_ip;
    memcpy(text, v.ptr, v.len);
    text[v.len] = '\0';
    unsigned char addr[16];
    int af = memchr(text, ':', v.len) ? AF_INET6 : AF_INET;
    if (inet_pton(af, text, addr) != 1)
        return why_ip;
    if (af == AF_INET) {
        *out_len = ipv4_text(addr, out);
        return NULL;
    }
    /* out has BD_NORM_MAX + 1 bytes, far more than INET6_ADDRSTRLEN */
    if (!inet_ntop(af, addr, out, BD_NORM_MAX + 1))
        return why_ip;
    *out_len = strlen(out);
    return NULL;
}

static const char *norm_ssn(bd_slice v, char *out, size_t *out_len)
{
    v = trim(v);
    size_t n = 0;
    for (size_t i = 0; i < v.len; i++) {
        unsigned char c = (unsigned char)v.ptr[i];
        if (is_digit(c)) {
            if (n == 9)
                return why_ssn;
            out[n++] = (char)c;
        } else if (c != '-' && c != ' ') {
            return why_ssn;
        }
    }
    if (n != 9)
        return why_ssn;
    out[n] = '\0';
    *out_len = n;
    return NULL;
}

static const char *norm_password(bd_slice v, char *out, size_t *out_len)
{
    if (v.len == 0)
        return why_password;
    memcpy(out, v.ptr, v.len);
    out[v.len] = '\0';
    *out_len = v.len;
    return NULL;
}

static const char *norm_password_hash(bd_slice v, char *out, size_t *out_len)
{
    v = trim(v);
    if (v.len == 0)
        return why_hash;
    bool all_hex = true;
    for (size_t i = 0; i < v.len; i++) {
        unsigned char c = (unsigned char)v.ptr[i];
        if (is_space(c) || is_control(c))
            return why_hash;
        all_hex = all_hex && is_hex(c);
    }
    if (all_hex) {
        copy_lower(v, out);
    } else {
        memcpy(out, v.ptr, v.len);
        out[v.len] = '\0';
    }
    *out_len = v.len;
    return NULL;
}

static const char *norm_bitcoin(bd_slice v, char *out, size_t *out_len)
{
    v = trim(v);
    if (v.len < 14 || v.len > 90)
        return why_bitcoin;
    for (size_t i = 0; i < v.len; i++) {
        if (!is_alnum((unsigned char)v.ptr[i]))
            return why_bitcoin;
    }
    memcpy(out, v.ptr, v.len);
    out[v.len] = '\0';
    *out_len = v.len;
    return NULL;
}

bd_result bd_normalize(bd_id_type t, bd_slice v, char *out, size_t *out_len, const char **why)
{
    const char *bad;
    *out_len = 0;
    out[0] = '\0';
    if (v.len && memchr(v.ptr, '\0', v.len)) {
        bad = why_nul;
        goto invalid;
    }
    /* Every rule below only shortens its input, so checking the raw length bounds the output;
     * the password is the only type that is not trimmed, so trim first for the others. */
    if ((t == BD_ID_PASSWORD ? v.len : trim(v).len) > BD_NORM_MAX) {
        bad = why_long;
        goto invalid;
    }
    switch (t) {
    case BD_ID_EMAIL:
        bad = norm_email(v, out, out_len);
        break;
    case BD_ID_EMAIL_DOMAIN:
        bad = norm_email_domain(v, out, out_len);
        break;
    case BD_ID_PHONE:
        bad = norm_phone(v, out, out_len);
        break;
    case BD_ID_USERNAME:
        bad = norm_username(v, out, out_len);
        break;
    case BD_ID_IP:
        bad = norm_ip(v, out, out_len);
        break;
    case BD_ID_SSN:
        bad = norm_ssn(v, out, out_len);
        break;
    case BD_ID_PASSWORD:
        bad = norm_password(v, out, out_len);
        break;
    case BD_ID_PASSWORD_HASH:
        bad = norm_password_hash(v, out, out_len);
        break;
    case BD_ID_BITCOIN:
        bad = norm_bitcoin(v, out, out_len);
        break;
    case BD_ID_WEBSITE_DOMAIN: /* IDNA may lengthen it: bounded by the host's 253 bytes */
        bad = bd_website_host(v, out, out_len);
        break;
    default:
        bad = "the identity type is unknown";
        break;
    }
    if (!bad) {
        if (why)
            *why = NULL;
        return BD_OK;
    }
invalid:
    *out_len = 0;
    out[0] = '\0';
    if (why)
        *why = bad;
    return BD_ERR_INVALID;
}
