/*
 * Console output into a shared-memory ring (lib/conring.h) that the rtmux hypervisor drains on another
 * CPU: writing it never traps. Used instead of the board's UART when the DTB offers one.
 */
#ifndef DRIVERS_CONRING_H
#define DRIVERS_CONRING_H

#include <stddef.h>
#include <stdint.h>

/* Starts writing to the ring at `base` with `size` data bytes (a power of two). */
void conring_init(uintptr_t base, uint32_t size);
/* Appends s[0..n); what does not fit is dropped and counted. Callers serialise (one producer). */
void conring_write(const char *s, size_t n);

#endif /* DRIVERS_CONRING_H */
