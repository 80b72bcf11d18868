/*
 * A reference load on the board's second CPU, for measurements only (the rtos itself runs on one
 * CPU). It lets the bare-metal rtos see the same kind of activity on the other vCPU as it sees inside
 * an rtmux partition beside Linux, without any hypervisor, so that a delay the rtos shows in both
 * belongs to the emulator and not to rtmux (BENCHMARKS.md). Applications take it from the boot
 * argument cpu1=PATTERN (docs/rtos-console.md).
 *
 * Patterns (the loaded CPU never calls the kernel and never interrupts the rtos's CPU):
 *   spin  an ALU loop that never sleeps (a shell busy loop in Linux)
 *   copy  64 KiB memory copies without end (dd, hackbench)
 *   tick  idle in WFI, woken by its own timer every 4 ms for ~10 us of work (idle Linux, HZ=250)
 */
#ifndef RTOS_CPULOAD_H
#define RTOS_CPULOAD_H

/* Starts `pattern` on the CPU after the boot CPU (affinity + 1). RT_OK; RT_EINVAL for an unknown
 * pattern; RT_EBUSY if already started or that CPU is on; RT_EPERM if PSCI refused (inside an rtmux
 * partition, which owns one CPU). */
int rt_cpuload_start(const char *pattern);
/* Starts the pattern the boot argument cpu1=PATTERN names, if any, and prints on the console (as
 * `WHO: cpu1 load ...`) whether it started. */
void rt_cpuload_start_from_bootargs(const char *who);

#endif /* RTOS_CPULOAD_H */
