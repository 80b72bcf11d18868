/*
 * The thread statistics server: answers Linux's rtmux-top on the V-Bus channel `rtmux-threads` with the
 * statistics of every live thread (rt_thread_stats_get) and the CPU's totals. The protocol, version 1,
 * is in docs/rtmux-top.md; in short, one request a line from Linux:
 *
 *   threads 1 TAG all            every thread
 *   threads 1 TAG id ID          one thread by its id
 *   threads 1 TAG name NAME      one thread by its name (the rest of the line)
 *
 * answered by
 *
 *   threads 1 TAG ok N
 *   system UPTIME_NS IDLE_NS IRQS THREADS UNLISTED
 *   server REQUESTS REFUSED ABANDONED
 *   thread ID BASE PRIO STATE CPU_NS SWITCHES WAKEUPS WORST_WAKE_NS STACK_USED STACK_SIZE NAME   (N lines)
 *   end TAG
 *
 * or by one line `threads 1 TAG error CODE TEXT` (TAG `-` when the request's own could not be read):
 * CODE unknown-thread (no such thread), malformed or version (refused: counted in REFUSED).
 *
 * Its budget is its own: the server is one thread at the priority it is given (the C library's start-up
 * gives RT_PRIO_MIN, below every application thread), so whatever Linux asks delays no more urgent
 * thread by more than one kernel call (each thread's counters are copied with interrupts masked, one
 * thread at a time). It never waits for Linux beyond THREADSTAT_SEND_WAIT a reply: a reply Linux does
 * not read in time is abandoned (counted). It reads at most THREADSTAT_RATE requests a second; more
 * wait in the channel (and Linux's writer blocks when its ring is full).
 */
#ifndef RTOS_THREADSTAT_H
#define RTOS_THREADSTAT_H

#include "rtos/types.h"

#define THREADSTAT_CHANNEL   "rtmux-threads"
#define THREADSTAT_VERSION   1
#define THREADSTAT_REQ_MAX   80u /* bytes of a request line, its newline included */
#define THREADSTAT_RATE      32u /* requests answered a second, at most */
#define THREADSTAT_SEND_WAIT RT_MSEC(100)

struct rt_threadstat_counts {
    uint64_t requests;  /* lines answered (refusals included) */
    uint64_t refused;   /* malformed, or of another version */
    uint64_t abandoned; /* replies Linux did not take in time, or closed the port before it read */
};

/*
 * Opens THREADSTAT_CHANNEL and starts the server's thread at `prio`. RT_ENOENT: the system has no such
 * channel (the configuration's [services] threads is false, or bare metal): nothing is started, nothing
 * is said. RT_EBUSY the second time; otherwise rt_chan_open's or rt_thread_create's result. Thread
 * context only.
 */
int rt_threadstat_start(unsigned prio);

/* The server's counters so far (all zero when it is not running). */
void rt_threadstat_counts(struct rt_threadstat_counts *out);

#endif /* RTOS_THREADSTAT_H */
