/* The build's version and commit (the Makefile writes them into the build's gen/bd_build_info.h).
 */
#ifndef BD_CORE_VERSION_H
#define BD_CORE_VERSION_H

/* "0.36.0": the version of debian/changelog's first entry. */
const char *bd_version(void);
/* The commit built, 12 hex digits, or "unknown" outside a git checkout. */
const char *bd_commit(void);

#endif
