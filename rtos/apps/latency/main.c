/*
 * Timer-latency measurement, the rtos counterpart of Xenomai's `latmus -m`. Boot arguments:
 * period_us, samples, load, report_ms, echo (docs/rtos-console.md).
 *
 * With load=1 the CPU is never idle and interrupts keep arriving: three round-robin FPU-busy threads at
 * the lowest priority, and the EL1 physical timer firing at ~21 kHz whose handler wakes a mid-priority
 * worker thread (so each load interrupt also costs two context switches).
 *
 * With echo=1 (inside rtmux) the V-Bus channel `echo` is served at a priority below everything above:
 * the latency is then measured while Linux programs talk to the rtos (make bench's V-Bus case).
 */
#include "arch/cpu.h"
#include "board.h"
#include "rtos/cpuload.h"
#include "rtos/echo.h"
#include "rtos/latmon.h"
#include "rtos/rtos.h"

#define LOAD_INTID     BOARD_INTID_PHYS_TIMER
#define LOAD_PERIOD_NS 47000u /* ~21 kHz; not a divisor of usual sampling periods, so the phase sweeps */
#define LOAD_BUSY      3u
#define ECHO_PRIO      30 /* below the load worker (100) and the sampler (RT_PRIO_MAX) */

static rt_thread_t busy[LOAD_BUSY], worker;
static uint8_t busy_stack[LOAD_BUSY][4096] __attribute__((aligned(16)));
RT_STACK_DEFINE(worker_stack, 4096);
static rt_sem_t tick;
static uint64_t load_ticks;
static volatile double sink;

static void load_irq(unsigned intid, void *arg)
{
    (void)intid;
    (void)arg;
    ARCH_WRITE_SYSREG(cntp_tval_el0, load_ticks);
    (void)rt_sem_give(&tick);
}

static void worker_entry(void *arg)
{
    (void)arg;
    double acc = 1.0;
    for (;;) {
        (void)rt_sem_take(&tick, RT_FOREVER);
        for (int i = 0; i < 5000; i++) { /* ~20 us of FP work per wake-up */
            acc = acc * 1.0000001 + 0.5;
        }
        sink = acc;
    }
}

static void busy_entry(void *arg)
{
    double x = (double)(uintptr_t)arg + 1.0;
    for (;;) {
        for (int i = 0; i < 1000; i++) {
            x = x * 0.999999 + 1.0 / (x + 3.0);
        }
        sink = x;
    }
}

static void start_load(void)
{
    (void)rt_sem_init(&tick, 0, 1000);
    for (unsigned i = 0; i < LOAD_BUSY; i++) {
        (void)rt_thread_create(&busy[i], "load-busy", busy_entry, (void *)(uintptr_t)i, busy_stack[i],
                               sizeof(busy_stack[i]), RT_PRIO_MIN);
        (void)rt_thread_set_timeslice(&busy[i], RT_MSEC(1));
    }
    (void)rt_thread_create(&worker, "load-worker", worker_entry, NULL, worker_stack, sizeof(worker_stack),
                           100);
    if (!arch_spare_timer_available()) {
        /* The interrupt load is the EL1 timer the kernel does not use: none with timer=phys. */
        rt_printf(
            "latency: load: busy threads only (timer=phys: no second EL1 timer for the interrupt load)\n");
        return;
    }
    load_ticks = rt_ns_to_ticks(LOAD_PERIOD_NS);
    (void)rt_irq_attach(LOAD_INTID, 128, RT_IRQ_LEVEL, load_irq, NULL);
    ARCH_WRITE_SYSREG(cntp_tval_el0, load_ticks);
    ARCH_WRITE_SYSREG(cntp_ctl_el0, CNT_CTL_ENABLE);
    (void)rt_irq_enable(LOAD_INTID);
}

void rt_main(void)
{
    static const char *const known[] = {"period_us", "samples",   "load", "report_ms",
                                        "cpu1",      "load_cpus", "echo", NULL};
    (void)rt_bootargs_check(known);
    rt_cpuload_start_from_bootargs("latency");
    uint64_t period_us = rt_bootarg_u64("period_us", 1000);
    uint64_t samples = rt_bootarg_u64("samples", 10000);
    uint64_t load = rt_bootarg_u64("load", 0);
    uint64_t report_ms = rt_bootarg_u64("report_ms", 1000);
    if (period_us < 10 || period_us > 1000000 || report_ms == 0 || report_ms > 3600000) {
        rt_printf("latency: period_us must be 10..1000000 and report_ms 1..3600000\n");
        rt_system_off();
    }
    if (load) {
        start_load();
    }
    if (rt_bootarg_u64("echo", 0) != 0) {
        (void)rt_echo_start("latency", "echo", ECHO_PRIO, 0);
    }
    struct rt_latmon_config cfg = {
        .period = RT_USEC(period_us),
        .samples = samples,
        .report_ms = (unsigned)report_ms,
        .histogram = true,
        .label = load ? "load on" : "load off",
    };
    int ret = rt_latmon_start(&cfg);
    if (ret != RT_OK) {
        rt_printf("latency: cannot start the monitor: %s\n", rt_strerror(ret));
        rt_system_off();
    }
    (void)rt_latmon_wait(RT_FOREVER);
    if (load) {
        ARCH_WRITE_SYSREG(cntp_ctl_el0, 0);
    }
    rt_printf("latency: %lu interrupts, %lu load-worker wake-ups\n", (unsigned long)rt_irq_count(),
              (unsigned long)rt_thread_switch_count(&worker));
    rt_system_off();
}
