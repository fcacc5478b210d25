/* A breach's Name in the style of Have I Been Pwned's API v3: the letters and digits of the
 * source name, each word starting with a capital ("Ashley Madison" -> "AshleyMadison",
 * "000webhost" -> "000webhost", "LinkedIn" stays "LinkedIn"). The store derives it once,
 * when a breach is first put, and keeps it: a Name never changes afterwards. Names are
 * unique among breaches regardless of case; a second breach that derives a taken Name gets
 * the first free numeric suffix ("Adobe2", "Adobe3", ...). */
#ifndef BD_STORE_BREACH_NAME_H
#define BD_STORE_BREACH_NAME_H

#include <stdbool.h>
#include <stddef.h>

#include "core/slice.h"

#define BD_BREACH_NAME_MAX 64 /* bytes, NUL excluded */

/* Writes the base Name of a source name into out (NUL-terminated) and returns its length:
 * ASCII letters and digits only (other UTF-8 is left out), a word's first letter upper-cased
 * (words are split by ASCII spaces and punctuation), the rest kept as written, at most
 * BD_BREACH_NAME_MAX bytes.
 * "Breach" when the source name has no ASCII letter or digit. */
size_t bd_breach_name_base(bd_slice source, char out[BD_BREACH_NAME_MAX + 1]);

/* Writes the base Name a new breach starts from: wanted when it is a well-formed Name
 * (bd_breach_name_valid), else the base of source. */
void bd_breach_name_start(bd_slice wanted, bd_slice source, char out[BD_BREACH_NAME_MAX + 1]);

/* Writes candidate k (k >= 1) for a base Name: the base itself for k == 1, else the base
 * followed by k's digits, the base shortened so that the whole fits BD_BREACH_NAME_MAX. */
void bd_breach_name_candidate(const char *base, int k, char out[BD_BREACH_NAME_MAX + 1]);

/* Whether s is a well-formed Name: 1..BD_BREACH_NAME_MAX ASCII letters and digits. */
bool bd_breach_name_valid(bd_slice s);

#endif
