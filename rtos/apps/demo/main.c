/*
 * Demo: what a motion-control application on the rtos looks like. A 1 kHz control loop drives a
 * simulated motor (position/velocity plant, PI controller, floating point) through a square-wave
 * set-point, a logger prints its state every second over a message queue, and the latency monitor
 * prints a latmus RTD| line every second. At the default 1 ms monitor period the control step runs in
 * the monitor's sampler (one timer; see rt_main). Runs until QEMU is stopped.
 *
 * Boot arguments: latmon=0 turns the latency monitor off; period_us sets the monitor's period;
 * cpu1=spin|copy|tick puts a reference load on the second CPU (bare metal only, rtos/cpuload.h).
 */
#include "rtos/cpuload.h"
#include "rtos/latmon.h"
#include "rtos/rtos.h"

#define CONTROL_PRIO   200
#define LOGGER_PRIO    20
#define CONTROL_PERIOD RT_MSEC(1)

/* Code and read-only data never change: their checksum, reported every second, shows that nothing
 * outside (Linux, a DMA-capable device) wrote into the rtos partition. */
extern const uint8_t _start[], _rodata_end[];

static uint32_t image_checksum(void)
{
    /* FNV-1a over 32-bit words: cheap, and any change of a word changes the sum. */
    uint32_t h = 2166136261u;
    for (const uint32_t *w = (const uint32_t *)(const void *)_start;
         w < (const uint32_t *)(const void *)_rodata_end; w++) {
        h = (h ^ *w) * 16777619u;
    }
    return h;
}

struct status {
    uint64_t cycle;
    uint64_t overruns;
    int32_t setpoint_mm;
    int32_t position_um;
    int32_t max_jitter_ns;
};

static rt_thread_t control, logger;
RT_STACK_DEFINE(control_stack, 8192);
RT_STACK_DEFINE(logger_stack, 8192);
static rt_msgq_t status_q;
RT_MSGQ_STORAGE_DEFINE(status_storage, sizeof(struct status), 4);

/* The controller's state; touched only by whichever thread runs control_step (one of them). */
static struct {
    double x, v, integ;
    struct status st;
    int64_t worst;
} ctl;

/* One control period, woken `wake_ns` after its release point, after `missed` missed periods. */
static void control_step(int64_t wake_ns, uint64_t missed, void *arg)
{
    (void)arg;
    /* Plant: x'' = (u - b x') / m; controller: PI on position error with a velocity term. */
    const double dt = 0.001, m = 0.5, b = 2.0, kp = 400.0, ki = 50.0, kd = 40.0;
    ctl.worst = wake_ns > ctl.worst ? wake_ns : ctl.worst;
    ctl.st.cycle++;
    ctl.st.overruns += missed;
    double target = (ctl.st.cycle / 2000u) % 2u ? 0.010 : 0.0; /* 10 mm step every 2 s */
    double err = target - ctl.x;
    ctl.integ += err * dt;
    double u = kp * err + ki * ctl.integ - kd * ctl.v;
    ctl.v += (u - b * ctl.v) / m * dt;
    ctl.x += ctl.v * dt;
    if (ctl.st.cycle % 1000u == 0) {
        ctl.st.setpoint_mm = (int32_t)(target * 1000.0);
        ctl.st.position_um = (int32_t)(ctl.x * 1e6);
        ctl.st.max_jitter_ns = (int32_t)ctl.worst;
        ctl.worst = 0;
        (void)rt_msgq_send(&status_q, &ctl.st, RT_NO_WAIT);
    }
}

/* The control loop's own periodic thread: used only when the latency monitor does not run at the
 * control period (see rt_main). */
static void control_entry(void *arg)
{
    (void)arg;
    (void)rt_periodic_start(0, CONTROL_PERIOD);
    for (;;) {
        uint64_t ov = 0;
        rt_time_t rel = 0;
        (void)rt_periodic_wait(&ov, &rel);
        control_step((int64_t)(rt_time_now() - rel), ov, NULL);
    }
}

static void logger_entry(void *arg)
{
    (void)arg;
    struct status st;
    char jit[24];
    uint32_t boot_sum = image_checksum();
    rt_printf("demo: code+rodata checksum 0x%08x over %lu KiB\n", boot_sum,
              (unsigned long)((uintptr_t)(_rodata_end - _start) / 1024u));
    for (;;) {
        if (rt_msgq_recv(&status_q, &st, RT_FOREVER) != RT_OK) {
            continue;
        }
        (void)rt_fmt_us(jit, sizeof(jit), st.max_jitter_ns);
        uint32_t sum = image_checksum();
        rt_printf("demo: t=%lus control loop %lu cycles, %lu overruns, set-point %d mm, position %d um, "
                  "worst wake-up %s us, checksum %s\n",
                  (unsigned long)(st.cycle / 1000u), (unsigned long)st.cycle, (unsigned long)st.overruns,
                  st.setpoint_mm, st.position_um, jit, sum == boot_sum ? "unchanged" : "CHANGED");
    }
}

void rt_main(void)
{
    static const char *const known[] = {"latmon", "period_us", "cpu1", NULL};
    (void)rt_bootargs_check(known);
    rt_cpuload_start_from_bootargs("demo");
    (void)rt_msgq_init(&status_q, status_storage, sizeof(struct status), 4);
    (void)rt_thread_create(&logger, "logger", logger_entry, NULL, logger_stack, sizeof(logger_stack),
                           LOGGER_PRIO);
    bool latmon = rt_bootarg_u64("latmon", 1) != 0;
    rt_time_t period = RT_USEC(rt_bootarg_u64("period_us", 1000));
    /*
     * At the control period, the control step runs in the latency monitor's sampler: the demo then
     * has one periodic timer, and its worst wake-up is the RTD| line's maximum. Two periodic threads
     * at different phases would be as correct on hardware, but under QEMU's icount round-robin the
     * second one woken waits for the other vCPU's turn whenever that vCPU is busy (Linux booting):
     * hundreds of missed periods a Linux boot, the same bare metal with a busy loop on CPU 1
     * (BENCHMARKS.md, "QEMU's round-robin and a second rtos timer").
     */
    bool shared = latmon && period == CONTROL_PERIOD;
    if (!shared) {
        (void)rt_thread_create(&control, "control", control_entry, NULL, control_stack, sizeof(control_stack),
                               CONTROL_PRIO);
    }
    if (latmon) {
        struct rt_latmon_config cfg = {
            .period = period,
            .samples = 0,
            .report_ms = 1000,
            .histogram = false,
            .label = "demo",
            .on_sample = shared ? control_step : NULL,
            .arg = NULL,
        };
        int rc = rt_latmon_start(&cfg);
        if (rc != RT_OK) {
            rt_printf("demo: latency monitor not started: %s\n", rt_strerror(rc));
        }
    }
    rt_printf("demo: running; Ctrl-A x leaves QEMU\n");
}
