/*
 * An echo service on a V-Bus channel: every byte a Linux program writes to the channel's port comes
 * back to it, in order (the far end of rtmux-ping, and of `make bench`'s V-Bus cases). Used by the demo
 * and by the latency app (boot argument echo=1).
 */
#ifndef RTOS_ECHO_H
#define RTOS_ECHO_H

#include "rtos/types.h"

/* Starts the service's thread at priority `prio`: it opens `channel` after `open_delay` (until then
 * Linux finds the port closed; 0: at once) and echoes until the system stops. Its messages on the
 * console start with `who` (docs/rtos-console.md). One service per image: RT_EBUSY the second time;
 * otherwise rt_thread_create's result. Thread context only. */
int rt_echo_start(const char *who, const char *channel, unsigned prio, rt_time_t open_delay);

#endif /* RTOS_ECHO_H */
