/* Data classes in Have I Been Pwned's wording ("Email addresses", "Passwords", ...) from the
 * leaked_data_types tokens breaches are imported with (email, password, phone_number, ...).
 * Known tokens map through a table (docs/API.md lists it); any other token is shown in a
 * readable form of its own: separators become spaces, the first letter a capital
 * ("credit_score" -> "Credit score"). Everything here is fixed-size: no allocation. */
#ifndef BD_HIBP_HIBP_CLASSES_H
#define BD_HIBP_HIBP_CLASSES_H

#include <stddef.h>

#include "core/slice.h"

#define BD_HIBP_CLASS_MAX 63 /* bytes of one class name, NUL excluded; longer ones are cut */
#define BD_HIBP_CLASSES_MAX 64 /* distinct classes one set holds; further ones are dropped */

/* Writes the class name of one token (trimmed; case-insensitive) and returns its length; 0
 * for a token with nothing readable in it. */
size_t bd_hibp_data_class(bd_slice token, char out[BD_HIBP_CLASS_MAX + 1]);

/* A sorted set of distinct class names. */
typedef struct {
    size_t n;
    char name[BD_HIBP_CLASSES_MAX][BD_HIBP_CLASS_MAX + 1];
} bd_hibp_classes;

/* Adds the classes of a leaked_data_types list (tokens separated by ',' or ';') to set,
 * keeping it sorted (byte order) and without repeats. */
void bd_hibp_classes_add(bd_hibp_classes *set, bd_slice leaked_data_types);

#endif
