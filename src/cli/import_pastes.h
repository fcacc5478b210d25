/* breachctl import pastes FILE...: pastes for the HIBP API's pasteaccount (import_pastes.c). */
#ifndef BD_CLI_IMPORT_PASTES_H
#define BD_CLI_IMPORT_PASTES_H

#include <stddef.h>

#include "store/store.h"

/* Imports each JSON Lines file (one paste a line: docs/OPERATIONS.md, "Pastes"), each in one
 * transaction; prints a line per refused paste and a summary on stderr. BD_EXIT_OK,
 * BD_EXIT_REJECTED (some line refused) or BD_EXIT_FAIL (a file unreadable, the store failing). */
int bd_cli_import_pastes(bd_store *s, char *const *files, size_t n);

#endif
