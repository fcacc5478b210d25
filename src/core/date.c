/* Date parsing and formatting. */
#include "core/date.h"

#include <string.h>
#include <strings.h>

static const char MONTHS[12][4] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                   "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

int bd_days_in_month(int y, int m)
{
    static const int days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (m < 1 || m > 12)
        return 0;
    if (m == 2 && ((y % 4 == 0 && y % 100 != 0) || y % 400 == 0))
        return 29;
    return days[m - 1];
}

/* Reads exactly n ASCII digits at p. Returns -1 when any is not a digit. */
static int digits(const char *p, int n)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (p[i] < '0' || p[i] > '9')
            return -1;
        v = v * 10 + (p[i] - '0');
    }
    return v;
}

static bool valid_date(int y, int m, int d)
{
    return y >= 1900 && y <= 2199 && m >= 1 && m <= 12 && d >= 1 && d <= bd_days_in_month(y, m);
}

static bool parse_iso_at(const char *p, bd_datetime *out)
{
    if (p[4] != '-' || p[7] != '-')
        return false;
    int y = digits(p, 4), m = digits(p + 5, 2), d = digits(p + 8, 2);
    if (y < 0 || m < 0 || d < 0 || !valid_date(y, m, d))
        return false;
    *out = (bd_datetime){.y = y, .m = m, .d = d};
    return true;
}

bool bd_date_parse_iso(bd_slice s, bd_datetime *out)
{
    return s.len == 10 && parse_iso_at(s.ptr, out);
}

bool bd_date_parse_dmy(bd_slice s, bd_datetime *out)
{
    if (s.len != 11 || s.ptr[2] != '-' || s.ptr[6] != '-')
        return false;
    int d = digits(s.ptr, 2), y = digits(s.ptr + 7, 4), m = 0;
    for (int i = 0; i < 12; i++)
        if (strncasecmp(s.ptr + 3, MONTHS[i], 3) == 0)
            m = i + 1;
    if (d < 0 || y < 0 || m == 0 || !valid_date(y, m, d))
        return false;
    *out = (bd_datetime){.y = y, .m = m, .d = d};
    return true;
}

bool bd_datetime_parse(bd_slice s, bd_datetime *out)
{
    if (s.len != 19 || (s.ptr[10] != ' ' && s.ptr[10] != 'T') || s.ptr[13] != ':' ||
        s.ptr[16] != ':')
        return false;
    bd_datetime t;
    if (!parse_iso_at(s.ptr, &t))
        return false;
    int hh = digits(s.ptr + 11, 2), mi = digits(s.ptr + 14, 2), ss = digits(s.ptr + 17, 2);
    if (hh < 0 || hh > 23 || mi < 0 || mi > 59 || ss < 0 || ss > 59)
        return false;
    t.hh = hh;
    t.mi = mi;
    t.ss = ss;
    *out = t;
    return true;
}

/* Writes v as exactly n decimal digits (v is already range-checked by the parsers). */
static void put_digits(char *p, int v, int n)
{
    for (int i = n - 1; i >= 0; i--) {
        p[i] = (char)('0' + (v % 10 + 10) % 10);
        v /= 10;
    }
}

void bd_date_format_iso(const bd_datetime *t, char out[11])
{
    put_digits(out, t->y, 4);
    out[4] = '-';
    put_digits(out + 5, t->m, 2);
    out[7] = '-';
    put_digits(out + 8, t->d, 2);
    out[10] = '\0';
}

void bd_date_format_dmy(const bd_datetime *t, char out[12])
{
    int m = t->m >= 1 && t->m <= 12 ? t->m : 1;
    put_digits(out, t->d, 2);
    out[2] = '-';
    memcpy(out + 3, MONTHS[m - 1], 3);
    out[6] = '-';
    put_digits(out + 7, t->y, 4);
    out[11] = '\0';
}

void bd_datetime_format(const bd_datetime *t, char out[20])
{
    bd_date_format_iso(t, out);
    out[10] = ' ';
    put_digits(out + 11, t->hh, 2);
    out[13] = ':';
    put_digits(out + 14, t->mi, 2);
    out[16] = ':';
    put_digits(out + 17, t->ss, 2);
    out[19] = '\0';
}

bool bd_date_iso_to_dmy(bd_slice iso, char out[12])
{
    bd_datetime t;
    if (!bd_date_parse_iso(iso, &t))
        return false;
    bd_date_format_dmy(&t, out);
    return true;
}
