/* The service manager's readiness protocol (sd_notify(3)), without libsystemd: a datagram of
 * "KEY=value" lines to the unix socket named by $NOTIFY_SOCKET (a path, or '@' for the
 * abstract namespace). Outside systemd (no variable) it does nothing. */
#ifndef BD_CORE_NOTIFY_H
#define BD_CORE_NOTIFY_H

#include <stdbool.h>

/* Sends state ("READY=1", "STOPPING=1", "STATUS=..."); true when sent or when there is no
 * service manager to tell, false when $NOTIFY_SOCKET names a socket the send failed on. */
bool bd_notify(const char *state);

#endif
