/*
 * Calls from the hypervisor to the firmware below it (PSCI over SMC at EL3; arch/arm64/firmware.c).
 */
#ifndef HYP_ARCH_FIRMWARE_H
#define HYP_ARCH_FIRMWARE_H

#include <stdint.h>

/* Starts the CPU with affinity `mpidr` at `entry` (EL2, MMU off) with x0 = ctx; PSCI return code. */
int64_t fw_cpu_on(uint64_t mpidr, uint64_t entry, uint64_t ctx);
/* Powers the machine off. */
void fw_system_off(void) __attribute__((noreturn));

#endif /* HYP_ARCH_FIRMWARE_H */
