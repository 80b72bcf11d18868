/*
 * Reference load on the CPUs after the boot CPU (see rtos/cpuload.h). Everything here after cpu1_main
 * starts runs on such a CPU with IRQs masked: it touches only its own stack, its own copy buffers, its
 * own timer and its own redistributor frame, never kernel state (the kernel's lock is "IRQs masked on
 * one CPU").
 */
#include "rtos/cpuload.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/cpu.h"
#include "arm64/psci.h"
#include "board.h"
#include "drivers/intc.h"
#include "rtos/console.h"
#include "rtos/system.h"
#include "rtos/time.h"
#include "rtos/types.h"

#define TICK_NS   4000000u /* Debian's arm64 kernel: HZ=250 */
#define TICK_WORK 10000u   /* loop iterations per tick in `tick` (~10 us in icount) */
/* `sweep`'s period: 1 ms + 13 us, which no period of the rtos's that is a whole number of 100 us divides,
 * so its wake-ups come at every phase of the rtos's period in turn (13 us apart). */
#define SWEEP_NS   1013000u
#define COPY_WORDS (64u * 1024u / 8u)
#define CPU1_STACK 4096u

enum pattern { PAT_SPIN, PAT_COPY, PAT_TICK, PAT_SWEEP };

static const char *const names[] = {"spin", "copy", "tick", "sweep"};

/* One loaded CPU: what it runs and its own memory. */
struct load_cpu {
    struct arch_secondary boot;
    enum pattern pattern;
    uint64_t stack[CPU1_STACK / 8u] __attribute__((aligned(16)));
    uint64_t copy_src[COPY_WORDS], copy_dst[COPY_WORDS];
};

static struct load_cpu loads[RT_CPULOAD_MAX_CPUS];
static uint64_t tick_ticks, sweep_ticks; /* written before any loaded CPU starts, then only read */
static bool started;

static bool name_is(const char *a, const char *b)
{
    while (*a != '\0' && *a == *b) {
        a++;
        b++;
    }
    return *a == *b;
}

static void spin(uint64_t n)
{
    for (uint64_t i = 0; i < n; i++) {
        __asm__ volatile("" : : : "memory");
    }
}

static void copy_once(struct load_cpu *c)
{
    for (size_t i = 0; i < COPY_WORDS; i++) {
        c->copy_dst[i] = c->copy_src[i] + i;
    }
}

/* Its own EL1 virtual timer: each CPU has one, so the rtos's timer is not touched. */
static void timer_set(uint64_t cval)
{
    ARCH_WRITE_SYSREG(cntv_cval_el0, cval);
    ARCH_WRITE_SYSREG(cntv_ctl_el0, CNT_CTL_ENABLE);
    arch_isb();
}

/* The timer's PPI must reach this CPU's interface for WFI to wake; IRQs stay masked in PSTATE, so
 * nothing is ever taken: the level drops when the timer is re-armed. */
static void cpu1_gic_init(void)
{
    intc_cpu_ppi_init(BOARD_INTID_VIRT_TIMER, 0x80u);
}

static void cpu1_main(void *arg)
{
    struct load_cpu *c = arg;
    enum pattern p = c->pattern;
    uint64_t period = p == PAT_SWEEP ? sweep_ticks : tick_ticks;
    uint64_t next = arch_counter() + period;
    if (p == PAT_TICK || p == PAT_SWEEP) {
        cpu1_gic_init();
    }
    for (;;) {
        switch (p) {
        case PAT_SPIN:
            spin(UINT64_MAX);
            break;
        case PAT_COPY:
            copy_once(c);
            break;
        case PAT_TICK:
        case PAT_SWEEP:
            timer_set(next);
            while (arch_counter() < next) {
                arch_wfi();
            }
            next += period;
            spin(TICK_WORK);
            break;
        }
    }
}

int rt_cpuload_start(const char *pattern, unsigned ncpus)
{
    unsigned p = 0;
    while (p < sizeof(names) / sizeof(names[0]) && !name_is(pattern, names[p])) {
        p++;
    }
    if (p == sizeof(names) / sizeof(names[0]) || ncpus == 0 || ncpus > RT_CPULOAD_MAX_CPUS) {
        return RT_EINVAL;
    }
    if (started) {
        return RT_EBUSY;
    }
    tick_ticks = rt_ns_to_ticks(TICK_NS);
    sweep_ticks = rt_ns_to_ticks(SWEEP_NS);
    for (unsigned i = 0; i < ncpus; i++) {
        struct load_cpu *c = &loads[i];
        c->pattern = (enum pattern)p;
        c->boot.sp = (uint64_t)(uintptr_t)&c->stack[CPU1_STACK / 8u];
        c->boot.entry = cpu1_main;
        c->boot.arg = c;
        int64_t r = arch_cpu_start(arch_mpidr_affinity() + 1u + i, arch_secondary_entry, &c->boot);
        if (r != PSCI_SUCCESS) {
            /* The CPUs started so far keep their load (nothing stops one); a second call is refused. */
            started = i > 0;
            return r == PSCI_ALREADY_ON ? RT_EBUSY : r == PSCI_INVALID_PARAMS ? RT_EINVAL : RT_EPERM;
        }
    }
    started = true;
    return RT_OK;
}

void rt_cpuload_start_from_bootargs(const char *who)
{
    char pattern[16], count[8];
    if (rt_bootarg("cpu1", pattern, sizeof(pattern)) == 0) {
        return;
    }
    unsigned ncpus = 1;
    if (rt_bootarg("load_cpus", count, sizeof(count)) != 0) {
        ncpus = count[0] >= '1' && count[0] <= '9' && count[1] == '\0' ? (unsigned)(count[0] - '0') : 0u;
    }
    int rc = rt_cpuload_start(pattern, ncpus);
    if (rc == RT_OK) {
        rt_printf("%s: cpu1 load '%s' started on %u CPU(s)\n", who, pattern, ncpus);
    } else {
        rt_printf("%s: cpu1 load '%s' on %u CPU(s) not started: %s\n", who, pattern, ncpus, rt_strerror(rc));
    }
}
