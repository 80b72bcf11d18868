/*
 * The demo's files in Linux (docs/linux-services.md, "The demo uses it"): its set-point profile read
 * from a file, its telemetry appended to a CSV file, both through Linux's files service (open, read,
 * write on /linux/...), by one thread of low priority: the control loop never waits for Linux.
 */
#ifndef DEMO_FILES_H
#define DEMO_FILES_H

#include <stdint.h>

#include "rtos/rtos.h"

/* Where the control step's set-point came from. */
enum demo_source { DEMO_SQUARE, DEMO_PROFILE, DEMO_SETPOINT };

/* One second of the control loop: the control step's report, the logger's line and a telemetry row. */
struct demo_status {
    uint64_t time_ns; /* when the step ran (rt_time_now) */
    uint64_t cycle;
    uint64_t overruns;
    int32_t setpoint_mm; /* the nearest millimetre */
    int32_t setpoint_um;
    int32_t position_um;
    int32_t max_jitter_ns;
    int32_t profile_ms; /* time into the profile's cycle; -1 without a profile */
    uint8_t source;     /* enum demo_source */
};

struct demo_files_config {
    const char *profile; /* the profile's path (/linux/...), or NULL */
    const char *csv;     /* the telemetry CSV's path, or NULL */
    rt_time_t wait;      /* how long Linux's files may take to come at the start before it is said */
    rt_msgq_t *rows;     /* struct demo_status, one a second, from the logger */
    /* rows the logger could not queue (the thread was waiting for Linux): its count, read here */
    volatile const uint32_t *rows_lost;
};

/* The thread's work: never returns. */
void demo_files_run(const struct demo_files_config *cfg) __attribute__((noreturn));

#endif /* DEMO_FILES_H */
