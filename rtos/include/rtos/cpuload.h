/*
 * A reference load on the board's second CPU (or on up to three CPUs after the boot CPU), for
 * measurements only (the rtos itself runs on one CPU). It lets the bare-metal rtos see the same kind of
 * activity on the other vCPUs as it sees inside an rtmux partition beside Linux, without any
 * hypervisor, so that a delay the rtos shows in both belongs to the emulator and not to rtmux
 * (BENCHMARKS.md). Applications take it from the boot arguments cpu1=PATTERN and load_cpus=N
 * (docs/rtos-console.md).
 *
 * Patterns (the loaded CPU never calls the kernel and never interrupts the rtos's CPU):
 *   spin  an ALU loop that never sleeps (a shell busy loop in Linux)
 *   copy  64 KiB memory copies without end (dd, hackbench)
 *   tick  idle in WFI, woken by its own timer every 4 ms for ~10 us of work (idle Linux, HZ=250)
 *   sweep as tick, every 1.013 ms: its work comes at every phase of a period of the rtos's in turn (the
 *         wake-ups of Linux's daemons, which no period of the rtos's lines up with)
 */
#ifndef RTOS_CPULOAD_H
#define RTOS_CPULOAD_H

/* The most CPUs a load may occupy: the three after the boot CPU of QEMU virt's -smp 4 (the multi-CPU
 * benchmark's board). */
#define RT_CPULOAD_MAX_CPUS 3u

/* Starts `pattern` on the `ncpus` CPUs after the boot CPU (affinity + 1 ...). RT_OK; RT_EINVAL for an
 * unknown pattern, ncpus outside 1..RT_CPULOAD_MAX_CPUS or a CPU PSCI does not know; RT_EBUSY if
 * already started or such a CPU is on; RT_EPERM if PSCI refused (inside an rtmux partition, which owns
 * one CPU). */
int rt_cpuload_start(const char *pattern, unsigned ncpus);
/* Starts the pattern the boot argument cpu1=PATTERN names, if any, on load_cpus=N CPUs (1 unless
 * said), and prints on the console (as `WHO: cpu1 load ...`) whether it started. */
void rt_cpuload_start_from_bootargs(const char *who);

#endif /* RTOS_CPULOAD_H */
