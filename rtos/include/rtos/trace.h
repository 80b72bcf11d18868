/*
 * The scheduler trace: a flight recorder of what the kernel did, in a fixed ring in the rtos's own
 * memory (RT_TRACE_EVENTS events; the newest overwrite the oldest). Recorded, while the trace is on:
 * every thread switch (the thread switched to, its priority, and why the previous one left the CPU),
 * every wake-up (the thread and its cause: its timeout or period, a thread's call, an interrupt
 * handler's), every interrupt's entry and exit (INTID and nesting level), and the application's own
 * markers (rt_trace_mark), each stamped with the generic counter. The trace is on from boot with the
 * boot argument trace=1 (or after rt_trace_start); off, each place it records costs one load and one
 * branch.
 *
 * Nothing is sent anywhere while it records: `./rtmux trace` reads the ring out of the rtos's memory
 * through QEMU and writes a Perfetto / Chrome trace-event file and a timeline picture
 * (docs/tracing.md). An application that stops the trace when something goes wrong (a missed deadline:
 * rt_trace_stop) keeps the moments before it in the ring for the tools to read later.
 */
#ifndef RTOS_TRACE_H
#define RTOS_TRACE_H

#include <stdbool.h>
#include <stdint.h>

/* The ring's size in events (16 bytes each), fixed when the kernel library is built: a power of two.
 * At the demo's 1 kHz sampler it holds about the last 1.6 s; under the latency application's load
 * (~21,000 interrupts a second) about the last 80 ms. */
#define RT_TRACE_EVENTS 8192u

/* Starts recording (again: the ring keeps what it held and goes on after it). */
void rt_trace_start(void);
/* Stops recording: the ring keeps its contents until rt_trace_start. */
void rt_trace_stop(void);
bool rt_trace_on(void);
/* Records a marker of the application's: `id` (its own numbering) and a value, from a thread or an
 * interrupt handler. Nothing while the trace is off. */
void rt_trace_mark(uint16_t id, uint32_t value);

#endif /* RTOS_TRACE_H */
