/*
 * control-loop: a periodic control loop written only against POSIX (The Open Group Base
 * Specifications Issue 7, POSIX.1-2008) and C11. The same file builds for Linux (glibc) and for the
 * rtmux rtos (its SDK, picolibc); README.md says how, and what the figures mean.
 *
 * Three threads:
 * - control, SCHED_FIFO at the highest priority but one: wakes at absolute deadlines one period
 *   apart (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME)), reads the clock, steps a PI controller of
 *   a simulated first-order plant, and records how late it woke into the shared statistics;
 *   once a second it hands that second's summary to the logger through a message queue, without
 *   ever blocking on it (O_NONBLOCK: a full queue drops the summary and counts it);
 * - logger, SCHED_FIFO at the lowest priority: prints each summary it receives, with the totals
 *   it reads from the shared statistics;
 * - main: sets up, waits until the control thread says it is done (a condition variable), ends the
 *   logger, prints the result.
 * The statistics are shared under one mutex with priority inheritance (PTHREAD_PRIO_INHERIT): while
 * the logger holds it, the control thread waiting for it lends the logger its priority.
 *
 * Lateness = clock_gettime(CLOCK_MONOTONIC) right after the wake-up - the deadline it slept until.
 * A wake-up a whole period or more late has missed release points: they count as overruns and the
 * loop skips them (the next deadline stays on the period's grid).
 *
 * Output (stdout), lines the tools parse (rtmux's bench: tools/rtmux/formats/control_loop.py):
 *   CTS| second S samples N min_us X avg_us X max_us X overruns K total N max_us X setpoint X output X
 *   CTH| LOWER_NS COUNT          one per non-empty cell of the histogram (cells of CELL_NS ns)
 *   CTH| beyond COUNT            samples above the histogram's range, if any
 *   CTL| periods N period_us P samples N min_us X avg_us X p99_us X p999_us X max_us X overruns K
 *        dropped D prio P cell_ns C                      (one line, the last one)
 * p99 and p999 are nearest-rank percentiles from the histogram: the upper edge of the cell that holds
 * them, at most the max (so an upper bound, exact to CELL_NS). prio 0: the threads could not get
 * SCHED_FIFO (no permission) and ran at the default policy: not a real-time measurement.
 *
 * Arguments (optional; on the rtos main() gets none): [PERIODS [PERIOD_US]]; defaults CTL_PERIODS
 * and CTL_PERIOD_US, which the build may set (-DCTL_PERIODS=...). Exit status 0, or 1 on a failure.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <mqueue.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The POSIX options this program needs (<unistd.h>: -1 or undefined means absent). */
#if !defined(_POSIX_THREADS) || _POSIX_THREADS < 0
#error "needs POSIX threads"
#endif
#if !defined(_POSIX_THREAD_PRIORITY_SCHEDULING) || _POSIX_THREAD_PRIORITY_SCHEDULING < 0
#error "needs thread priority scheduling (SCHED_FIFO)"
#endif
#if !defined(_POSIX_THREAD_PRIO_INHERIT) || _POSIX_THREAD_PRIO_INHERIT < 0
#error "needs priority-inheritance mutexes"
#endif
#if !defined(_POSIX_MONOTONIC_CLOCK) || _POSIX_MONOTONIC_CLOCK < 0
#error "needs CLOCK_MONOTONIC"
#endif
#if !defined(_POSIX_CLOCK_SELECTION) || _POSIX_CLOCK_SELECTION < 0
#error "needs clock_nanosleep"
#endif
#if !defined(_POSIX_MESSAGE_PASSING) || _POSIX_MESSAGE_PASSING < 0
#error "needs message queues"
#endif

/* Memory locking is optional: a system without paging (the rtos) does not offer it, nor need it. */
#if defined(_POSIX_MEMLOCK) && _POSIX_MEMLOCK > 0
#include <sys/mman.h>
#define HAVE_MLOCKALL 1
#else
#define HAVE_MLOCKALL 0
#endif

#ifndef CTL_PERIODS
#define CTL_PERIODS 10000
#endif
#ifndef CTL_PERIOD_US
#define CTL_PERIOD_US 1000
#endif

#define NS_PER_S      1000000000L
#define CELL_NS       100   /* histogram cell: 0.1 us */
#define CELLS         10000 /* 0 to 1 ms; later wake-ups are counted in `beyond` */
#define QUEUE         "/control-loop"
#define QUEUE_DEPTH   8
#define STACK_SIZE    (128u * 1024u)
#define PERIODS_LIMIT 100000000L
#define PERIOD_LIMIT  1000000L /* us: one second */

/* One second of the loop, control -> logger through the queue. second 0 ends the logger. */
struct summary {
    long second;
    long samples;
    int64_t min_ns;
    int64_t max_ns;
    int64_t sum_ns;
    long overruns;
    long setpoint_milli; /* the controller's setpoint and the plant's output at the end of the second */
    long output_milli;
};

/* Everything the control thread measured; shared with the logger and main under `lock`. */
struct stats {
    long samples;
    int64_t min_ns;
    int64_t max_ns;
    int64_t sum_ns;
    long overruns;
    long dropped; /* summaries the full queue refused */
    long beyond;  /* samples above the histogram */
    int finished; /* the control thread is done (signalled on `done`) */
    uint32_t cells[CELLS];
};

static struct stats stats;
static pthread_mutex_t lock;
static pthread_cond_t done = PTHREAD_COND_INITIALIZER;
static mqd_t queue_tx = (mqd_t)-1; /* the control thread's end: O_NONBLOCK */
static long periods = CTL_PERIODS;
static long period_us = CTL_PERIOD_US;
static int fifo_prio; /* the control thread's SCHED_FIFO priority; 0: none */
static int control_failed;

static int64_t ts_ns(const struct timespec *t)
{
    return (int64_t)t->tv_sec * NS_PER_S + t->tv_nsec;
}

static void ts_add(struct timespec *t, int64_t ns)
{
    t->tv_sec += (time_t)(ns / NS_PER_S);
    t->tv_nsec += (long)(ns % NS_PER_S);
    if (t->tv_nsec >= NS_PER_S) {
        t->tv_nsec -= NS_PER_S;
        t->tv_sec++;
    }
}

/* ns as microseconds with three decimals, without floating point. */
static const char *us(char *buf, size_t size, int64_t ns)
{
    int64_t a = ns < 0 ? -ns : ns;
    snprintf(buf, size, "%s%lld.%03lld", ns < 0 ? "-" : "", (long long)(a / 1000), (long long)(a % 1000));
    return buf;
}

static long milli(double x)
{
    return (long)(x * 1000.0 + (x < 0 ? -0.5 : 0.5));
}

static void record(int64_t late, long missed)
{
    struct stats *s = &stats;
    if (s->samples == 0 || late < s->min_ns)
        s->min_ns = late;
    if (s->samples == 0 || late > s->max_ns)
        s->max_ns = late;
    s->samples++;
    s->sum_ns += late;
    s->overruns += missed;
    int64_t cell = late < 0 ? 0 : late / CELL_NS;
    if (cell < CELLS)
        s->cells[cell]++;
    else
        s->beyond++;
}

static void *control(void *arg)
{
    (void)arg;
    const int64_t period = (int64_t)period_us * 1000;
    const long per_second = period_us < 1000000 ? 1000000 / period_us : 1;
    const double dt = (double)period / 1e9;
    /* A PI controller holding a first-order plant (time constant 50 ms) on a square-wave setpoint
       (0, then 1, a second each): the work a real loop would do between its wake-ups. */
    const double tau = 0.05, kp = 2.0, ki = 20.0;
    double setpoint = 0.0, output = 0.0, integral = 0.0;
    struct summary sum = {0};
    struct timespec next, now;

    clock_gettime(CLOCK_MONOTONIC, &next);
    for (long i = 0; i < periods; i++) {
        ts_add(&next, period);
        int err;
        while ((err = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL)) == EINTR) {
        }
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (err != 0) {
            fprintf(stderr, "control-loop: clock_nanosleep: %s\n", strerror(err));
            control_failed = 1;
            break;
        }
        int64_t late = ts_ns(&now) - ts_ns(&next);
        long missed = late >= period ? (long)(late / period) : 0;

        double error = setpoint - output;
        integral += error * dt;
        double u = kp * error + ki * integral;
        output += dt / (tau + dt) * (u - output); /* backward Euler: stable at any period */

        pthread_mutex_lock(&lock);
        record(late, missed);
        pthread_mutex_unlock(&lock);

        if (sum.samples == 0 || late < sum.min_ns)
            sum.min_ns = late;
        if (sum.samples == 0 || late > sum.max_ns)
            sum.max_ns = late;
        sum.samples++;
        sum.sum_ns += late;
        sum.overruns += missed;
        if ((i + 1) % per_second == 0 || i + 1 == periods) {
            sum.second = (i + 1 + per_second - 1) / per_second;
            sum.setpoint_milli = milli(setpoint);
            sum.output_milli = milli(output);
            if (mq_send(queue_tx, (const char *)&sum, sizeof sum, 0) != 0) {
                pthread_mutex_lock(&lock);
                stats.dropped++;
                pthread_mutex_unlock(&lock);
            }
            memset(&sum, 0, sizeof sum);
            setpoint = setpoint > 0.5 ? 0.0 : 1.0;
        }
        if (missed > 0) /* skip the release points already past: stay on the grid */
            ts_add(&next, (int64_t)missed * period);
    }
    pthread_mutex_lock(&lock);
    stats.finished = 1;
    pthread_cond_signal(&done);
    pthread_mutex_unlock(&lock);
    return NULL;
}

static void *logger(void *arg)
{
    mqd_t rx = *(const mqd_t *)arg;
    struct summary s;
    char a[32], b[32], c[32], d[32];
    for (;;) {
        ssize_t n = mq_receive(rx, (char *)&s, sizeof s, NULL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n != (ssize_t)sizeof s) {
            fprintf(stderr, "control-loop: mq_receive: %s\n", n < 0 ? strerror(errno) : "short message");
            return NULL;
        }
        if (s.second == 0)
            return NULL;
        pthread_mutex_lock(&lock);
        long total = stats.samples;
        int64_t worst = stats.max_ns;
        pthread_mutex_unlock(&lock);
        printf("CTS| second %ld samples %ld min_us %s avg_us %s max_us %s overruns %ld total %ld max_us %s "
               "setpoint %ld.%03ld output %s%ld.%03ld\n",
               s.second, s.samples, us(a, sizeof a, s.min_ns),
               us(b, sizeof b, s.samples > 0 ? s.sum_ns / s.samples : 0), us(c, sizeof c, s.max_ns),
               s.overruns, total, us(d, sizeof d, worst), s.setpoint_milli / 1000, s.setpoint_milli % 1000,
               s.output_milli < 0 ? "-" : "", labs(s.output_milli) / 1000, labs(s.output_milli) % 1000);
    }
}

/* Start `fn` as a SCHED_FIFO thread at `prio`; without the permission for it (Linux as a normal
   user), at the default policy, said on stderr. Returns 0, or the error of pthread_create. */
static int start(pthread_t *t, void *(*fn)(void *), void *arg, int prio, const char *name, int *got_prio)
{
    pthread_attr_t attr;
    struct sched_param param;
    memset(&param, 0, sizeof param);
    param.sched_priority = prio;
    pthread_attr_init(&attr);
#if defined(_POSIX_THREAD_ATTR_STACKSIZE) && _POSIX_THREAD_ATTR_STACKSIZE > 0
    size_t stack = STACK_SIZE;
#ifdef PTHREAD_STACK_MIN
    if (stack < (size_t)PTHREAD_STACK_MIN)
        stack = (size_t)PTHREAD_STACK_MIN;
#endif
    pthread_attr_setstacksize(&attr, stack);
#endif
    pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
    pthread_attr_setschedpolicy(&attr, SCHED_FIFO);
    pthread_attr_setschedparam(&attr, &param);
    int err = pthread_create(t, &attr, fn, arg);
    *got_prio = prio;
    if (err == EPERM) {
        fprintf(stderr,
                "control-loop: no permission for SCHED_FIFO %d: the %s thread runs at the default "
                "policy (not a real-time measurement)\n",
                prio, name);
        pthread_attr_setinheritsched(&attr, PTHREAD_INHERIT_SCHED);
        err = pthread_create(t, &attr, fn, arg);
        *got_prio = 0;
    }
    pthread_attr_destroy(&attr);
    if (err != 0)
        fprintf(stderr, "control-loop: pthread_create (%s): %s\n", name, strerror(err));
    return err;
}

static int argument(const char *text, long limit, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || v < 1 || v > limit)
        return -1;
    *out = v;
    return 0;
}

/* The nearest-rank `per_mille` percentile: the upper edge of its cell, within [min, max]. */
static int64_t percentile(const struct stats *s, long per_mille)
{
    long rank = (s->samples * per_mille + 999) / 1000;
    long seen = 0;
    if (rank < 1)
        rank = 1;
    for (long i = 0; i < CELLS; i++) {
        seen += (long)s->cells[i];
        if (seen >= rank) {
            int64_t edge = (int64_t)(i + 1) * CELL_NS;
            edge = edge > s->max_ns ? s->max_ns : edge;
            return edge < s->min_ns ? s->min_ns : edge;
        }
    }
    return s->max_ns; /* among the samples above the histogram */
}

static void report(void)
{
    char a[32], b[32], c[32], d[32], e[32];
    pthread_mutex_lock(&lock);
    const struct stats *s = &stats;
    for (long i = 0; i < CELLS; i++) {
        if (s->cells[i] != 0)
            printf("CTH| %ld %lu\n", i * CELL_NS, (unsigned long)s->cells[i]);
    }
    if (s->beyond != 0)
        printf("CTH| beyond %ld\n", s->beyond);
    int64_t avg = s->samples > 0 ? (s->sum_ns + s->samples / 2) / s->samples : 0;
    printf("CTL| periods %ld period_us %ld samples %ld min_us %s avg_us %s p99_us %s p999_us %s max_us %s "
           "overruns %ld dropped %ld prio %d cell_ns %d\n",
           periods, period_us, s->samples, us(a, sizeof a, s->min_ns), us(b, sizeof b, avg),
           us(c, sizeof c, s->samples ? percentile(s, 990) : 0),
           us(d, sizeof d, s->samples ? percentile(s, 999) : 0), us(e, sizeof e, s->max_ns), s->overruns,
           s->dropped, fifo_prio, CELL_NS);
    pthread_mutex_unlock(&lock);
}

int main(int argc, char **argv)
{
    if (argc > 3 || (argc > 1 && argument(argv[1], PERIODS_LIMIT, &periods) != 0) ||
        (argc > 2 && argument(argv[2], PERIOD_LIMIT, &period_us) != 0)) {
        fprintf(stderr, "usage: control-loop [PERIODS [PERIOD_US]] (1..%ld, 1..%ld; default %d at %d us)\n",
                PERIODS_LIMIT, PERIOD_LIMIT, CTL_PERIODS, CTL_PERIOD_US);
        return 2;
    }
#if HAVE_MLOCKALL
    /* No page fault in the loop: everything mapped now and later stays in memory. */
    if (mlockall(MCL_CURRENT | MCL_FUTURE) != 0)
        fprintf(stderr, "control-loop: mlockall: %s (page faults may delay the loop)\n", strerror(errno));
#endif

    pthread_mutexattr_t mattr;
    pthread_mutexattr_init(&mattr);
    int err = pthread_mutexattr_setprotocol(&mattr, PTHREAD_PRIO_INHERIT);
    if (err == 0)
        err = pthread_mutex_init(&lock, &mattr);
    pthread_mutexattr_destroy(&mattr);
    if (err != 0) {
        fprintf(stderr, "control-loop: priority-inheritance mutex: %s\n", strerror(err));
        return 1;
    }

    struct mq_attr qattr;
    memset(&qattr, 0, sizeof qattr);
    qattr.mq_maxmsg = QUEUE_DEPTH;
    qattr.mq_msgsize = sizeof(struct summary);
    mq_unlink(QUEUE); /* a queue left by a run that was killed */
    mqd_t rx = mq_open(QUEUE, O_RDONLY | O_CREAT | O_EXCL, 0600, &qattr);
    mqd_t tx = rx == (mqd_t)-1 ? rx : mq_open(QUEUE, O_WRONLY);
    queue_tx = tx == (mqd_t)-1 ? tx : mq_open(QUEUE, O_WRONLY | O_NONBLOCK);
    if (queue_tx == (mqd_t)-1) {
        fprintf(stderr, "control-loop: mq_open %s: %s\n", QUEUE, strerror(errno));
        return 1;
    }

    /* Linux: 98 of 1..99, cyclictest's -p98; the rtos: 254 of 1..255. */
    int top = sched_get_priority_max(SCHED_FIFO) - 1;
    int bottom = sched_get_priority_min(SCHED_FIFO);
    int logger_prio;
    pthread_t log_thread, ctl_thread;
    if (start(&log_thread, logger, &rx, bottom, "logger", &logger_prio) != 0)
        return 1;
    if (start(&ctl_thread, control, NULL, top, "control", &fifo_prio) != 0) {
        control_failed = 1;
    } else {
        /* Wait for the end without a timeout, then join at once. (The rtos's pthread_join wakes every
           100 ms while it waits; in QEMU's icount mode with a second busy vCPU that one more timer
           delays the loop by milliseconds, an emulator artifact: examples/control-loop/README.md.) */
        pthread_mutex_lock(&lock);
        while (!stats.finished)
            pthread_cond_wait(&done, &lock);
        pthread_mutex_unlock(&lock);
        pthread_join(ctl_thread, NULL);
    }

    struct summary end;
    memset(&end, 0, sizeof end);
    if (mq_send(tx, (const char *)&end, sizeof end, 0) != 0)
        fprintf(stderr, "control-loop: mq_send: %s\n", strerror(errno));
    else
        pthread_join(log_thread, NULL);
    mq_close(queue_tx);
    mq_close(tx);
    mq_close(rx);
    mq_unlink(QUEUE);

    report();
    fflush(stdout);
    return control_failed || stats.samples != periods ? 1 : 0;
}
