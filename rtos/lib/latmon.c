/*
 * Latency monitor (see rtos/latmon.h).
 */
#include "rtos/latmon.h"

#include "rtos/console.h"
#include "rtos/msgq.h"
#include "rtos/sync.h"
#include "rtos/thread.h"
#include "rtos/time.h"

#define REPORTER_PRIO 2u
#define HEADER_EVERY  21u /* latmus repeats its header every 21 lines */

struct interval {
    int64_t min, max, sum;
    uint64_t count;
    uint64_t overruns;
    bool last;
};

static struct rt_latmon_config cfg;
static rt_thread_t sampler, reporter;
RT_STACK_DEFINE(sampler_stack, 4096);
RT_STACK_DEFINE(reporter_stack, 8192);
static rt_msgq_t reports;
RT_MSGQ_STORAGE_DEFINE(report_storage, sizeof(struct interval), 16);
static rt_sem_t finished;
static uint32_t hist[RT_LATMON_HIST_CELLS];
static uint64_t lost_reports;

static void interval_reset(struct interval *iv)
{
    iv->min = INT64_MAX;
    iv->max = INT64_MIN;
    iv->sum = 0;
    iv->count = 0;
    iv->overruns = 0;
    iv->last = false;
}

static void sampler_entry(void *arg)
{
    (void)arg;
    uint64_t per_report = (uint64_t)cfg.report_ms * 1000000u / cfg.period;
    if (per_report == 0) {
        per_report = 1;
    }
    struct interval iv;
    interval_reset(&iv);
    (void)rt_periodic_start(0, cfg.period);
    for (uint64_t n = 0; cfg.samples == 0 || n < cfg.samples; n++) {
        uint64_t overruns = 0;
        rt_time_t release = 0;
        (void)rt_periodic_wait(&overruns, &release);
        int64_t lat = (int64_t)(rt_time_now() - release);
        iv.min = lat < iv.min ? lat : iv.min;
        iv.max = lat > iv.max ? lat : iv.max;
        iv.sum += lat;
        iv.count++;
        iv.overruns += overruns;
        if (cfg.on_sample != NULL) {
            cfg.on_sample(lat, overruns, cfg.arg);
        }
        uint64_t cell = lat < 0 ? 0 : (uint64_t)lat / 1000u;
        hist[cell < RT_LATMON_HIST_CELLS ? cell : RT_LATMON_HIST_CELLS - 1]++;
        iv.last = cfg.samples != 0 && n + 1 == cfg.samples;
        if (iv.count == per_report || iv.last) {
            /* Never block the sampler on the reporter: a full queue loses a report, counted. */
            if (rt_msgq_send(&reports, &iv, RT_NO_WAIT) != RT_OK) {
                lost_reports++;
            }
            interval_reset(&iv);
        }
    }
}

static void print_us(char *buf, unsigned size, int64_t ns)
{
    (void)rt_fmt_us(buf, size, ns);
}

static void hms(char *buf, unsigned size, uint64_t s)
{
    (void)rt_snprintf(buf, size, "%02lu:%02lu:%02lu", (unsigned long)(s / 3600u),
                      (unsigned long)(s / 60u % 60u), (unsigned long)(s % 60u));
}

static void reporter_entry(void *arg)
{
    (void)arg;
    int64_t all_min = INT64_MAX, all_max = INT64_MIN, all_sum = 0;
    uint64_t all_count = 0, all_overruns = 0, lines = 0, elapsed_ms = 0;
    char a[24], b[24], c[24], d[24], e[24], t[16];
    for (;;) {
        struct interval iv;
        if (rt_msgq_recv(&reports, &iv, RT_FOREVER) != RT_OK) {
            continue;
        }
        elapsed_ms += iv.count * (cfg.period / 1000u) / 1000u;
        all_min = iv.min < all_min ? iv.min : all_min;
        all_max = iv.max > all_max ? iv.max : all_max;
        all_sum += iv.sum;
        all_count += iv.count;
        all_overruns += iv.overruns;
        if (lines % HEADER_EVERY == 0) {
            hms(t, sizeof(t), (elapsed_ms + 999u) / 1000u);
            rt_printf("RTT|  %s  (rtos periodic thread, %lu us period, priority %u, %s)\n", t,
                      (unsigned long)(cfg.period / 1000u), (unsigned)RT_PRIO_MAX, cfg.label);
            rt_printf("RTH|----lat min|----lat avg|----lat max|-overrun|---msw|---lat best|--lat worst\n");
        }
        lines++;
        print_us(a, sizeof(a), iv.min);
        print_us(b, sizeof(b), iv.sum / (int64_t)iv.count);
        print_us(c, sizeof(c), iv.max);
        print_us(d, sizeof(d), all_min);
        print_us(e, sizeof(e), all_max);
        rt_printf("RTD|%11s|%11s|%11s|%8lu|%6u|%11s|%11s\n", a, b, c, (unsigned long)all_overruns, 0u, d, e);
        if (!iv.last) {
            continue;
        }
        char t2[16];
        hms(t, sizeof(t), elapsed_ms / 1000u);
        hms(t2, sizeof(t2), cfg.samples * (cfg.period / 1000u) / 1000000u);
        print_us(b, sizeof(b), all_sum / (int64_t)all_count);
        rt_printf("---|-----------|-----------|-----------|--------|------|-------------------------\n");
        rt_printf("RTS|%11s|%11s|%11s|%8lu|%6u|    %s/%s\n", d, b, e, (unsigned long)all_overruns, 0u, t, t2);
        if (lost_reports != 0) {
            rt_printf("latmon: %lu interval reports lost (reporter starved)\n", (unsigned long)lost_reports);
        }
        if (cfg.histogram) {
            rt_printf("HSH| 1 us cells, %lu samples, %u cells\n", (unsigned long)all_count,
                      RT_LATMON_HIST_CELLS);
            for (unsigned i = 0; i < RT_LATMON_HIST_CELLS; i++) {
                if (hist[i] != 0) {
                    rt_printf("HSD| %u %lu\n", i, (unsigned long)hist[i]);
                }
            }
            rt_printf("HSE|\n");
        }
        (void)rt_sem_give(&finished);
        return;
    }
}

int rt_latmon_start(const struct rt_latmon_config *c)
{
    if (c == NULL || c->period < RT_USEC(10) || c->report_ms == 0) {
        return RT_EINVAL;
    }
    cfg = *c;
    if (cfg.label == NULL) {
        cfg.label = "";
    }
    int ret = rt_msgq_init(&reports, report_storage, sizeof(struct interval), 16);
    if (ret == RT_OK) {
        ret = rt_sem_init(&finished, 0, 1);
    }
    if (ret == RT_OK) {
        ret = rt_thread_create(&reporter, "latmon-report", reporter_entry, NULL, reporter_stack,
                               sizeof(reporter_stack), REPORTER_PRIO);
    }
    if (ret == RT_OK) {
        ret = rt_thread_create(&sampler, "latmon-sample", sampler_entry, NULL, sampler_stack,
                               sizeof(sampler_stack), RT_PRIO_MAX);
    }
    return ret;
}

int rt_latmon_wait(rt_time_t timeout)
{
    return rt_sem_take(&finished, timeout);
}
