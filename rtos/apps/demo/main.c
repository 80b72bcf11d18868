/*
 * Demo: what a motion-control application on the rtos looks like. A 1 kHz control loop drives a
 * simulated motor (position/velocity plant, PI controller, floating point) through a square-wave
 * set-point, a logger prints its state every second over a message queue, and the latency monitor
 * prints a latmus RTD| line every second. Runs until QEMU is stopped.
 *
 * Boot arguments: latmon=0 turns the latency monitor off; period_us sets the monitor's period.
 */
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

static void control_entry(void *arg)
{
    (void)arg;
    /* Plant: x'' = (u - b x') / m; controller: PI on position error with a velocity term. */
    const double dt = 0.001, m = 0.5, b = 2.0, kp = 400.0, ki = 50.0, kd = 40.0;
    double x = 0.0, v = 0.0, integ = 0.0;
    struct status st = {0};
    int64_t worst = 0;
    (void)rt_periodic_start(0, CONTROL_PERIOD);
    for (;;) {
        uint64_t ov = 0;
        rt_time_t rel = 0;
        (void)rt_periodic_wait(&ov, &rel);
        int64_t jitter = (int64_t)(rt_time_now() - rel);
        worst = jitter > worst ? jitter : worst;
        st.cycle++;
        st.overruns += ov;
        double target = (st.cycle / 2000u) % 2u ? 0.010 : 0.0; /* 10 mm step every 2 s */
        double err = target - x;
        integ += err * dt;
        double u = kp * err + ki * integ - kd * v;
        v += (u - b * v) / m * dt;
        x += v * dt;
        if (st.cycle % 1000u == 0) {
            st.setpoint_mm = (int32_t)(target * 1000.0);
            st.position_um = (int32_t)(x * 1e6);
            st.max_jitter_ns = (int32_t)worst;
            worst = 0;
            (void)rt_msgq_send(&status_q, &st, RT_NO_WAIT);
        }
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
    static const char *const known[] = {"latmon", "period_us", NULL};
    (void)rt_bootargs_check(known);
    (void)rt_msgq_init(&status_q, status_storage, sizeof(struct status), 4);
    (void)rt_thread_create(&logger, "logger", logger_entry, NULL, logger_stack, sizeof(logger_stack),
                           LOGGER_PRIO);
    (void)rt_thread_create(&control, "control", control_entry, NULL, control_stack, sizeof(control_stack),
                           CONTROL_PRIO);
    if (rt_bootarg_u64("latmon", 1) != 0) {
        struct rt_latmon_config cfg = {
            .period = RT_USEC(rt_bootarg_u64("period_us", 1000)),
            .samples = 0,
            .report_ms = 1000,
            .histogram = false,
            .label = "demo",
        };
        int rc = rt_latmon_start(&cfg);
        if (rc != RT_OK) {
            rt_printf("demo: latency monitor not started: %s\n", rt_strerror(rc));
        }
    }
    rt_printf("demo: running; Ctrl-A x leaves QEMU\n");
}
