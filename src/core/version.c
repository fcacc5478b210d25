/* The build's version and commit. */
#include "core/version.h"

#include "bd_build_info.h"

const char *bd_version(void)
{
    return BD_VERSION;
}

const char *bd_commit(void)
{
    return BD_COMMIT;
}
