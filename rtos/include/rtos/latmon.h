/*
 * Latency monitor: a top-priority periodic thread measures (wake-up time - release point) and a
 * low-priority thread prints Xenomai latmus-style reports (format: docs/rtos-console.md).
 */
#ifndef RTOS_LATMON_H
#define RTOS_LATMON_H

#include <stdbool.h>
#include <stdint.h>

#include "rtos/types.h"

#define RT_LATMON_HIST_CELLS 1000u /* 1 us cells; the last one collects everything above */

struct rt_latmon_config {
    rt_time_t period;   /* sampling period, ns */
    uint64_t samples;   /* stop after this many; 0 = run forever */
    unsigned report_ms; /* one RTD| line per report_ms of samples */
    bool histogram;     /* print the HSH/HSD/HSE histogram at the end */
    const char *label;  /* shown in the RTT| line, e.g. "load off" */
    /* Optional: called by the sampler after every sample, in its thread (priority RT_PRIO_MAX), with
     * the sample's latency and the periods missed before it. Work that must run every period can
     * live here instead of in a second periodic thread: one timer instead of two (see the demo). */
    void (*on_sample)(int64_t latency_ns, uint64_t overruns, void *arg);
    void *arg;
};

/* Starts the sampler (priority RT_PRIO_MAX) and the reporter (priority 2). */
int rt_latmon_start(const struct rt_latmon_config *cfg);
/* Blocks until the requested samples were taken and reported. */
int rt_latmon_wait(rt_time_t timeout);

#endif /* RTOS_LATMON_H */
