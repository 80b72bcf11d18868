/*
 * <sched.h>'s process scheduling calls. The rtos runs one process (getpid() is 1), and its threads are
 * scheduled each on its own: a call on process 0 or 1 acts on the calling thread (the standard leaves
 * the effect of process scheduling on threads to the implementation; docs/posix.md). Any other process
 * ID does not exist (ESRCH).
 *
 * Policies: SCHED_FIFO, SCHED_RR (a slice of RTMUX_SCHED_RR_INTERVAL_NS among equal priorities) and
 * SCHED_OTHER (the same as SCHED_RR); priorities 1 to 255 for each, higher more urgent.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>

#include "posix.h"
#include "pthread_impl.h"
#include "rtos/thread.h"

static int fail(int err)
{
    errno = err;
    return -1;
}

/* Process 0 (the caller's) or 1 (the one process) is the calling thread. */
static bool own_process(pid_t pid)
{
    return pid == 0 || pid == 1;
}

int sched_yield(void)
{
    rt_thread_yield();
    return 0;
}

int sched_get_priority_min(int policy)
{
    if (policy != SCHED_FIFO && policy != SCHED_RR && policy != SCHED_OTHER) {
        return fail(EINVAL);
    }
    return RT_PRIO_MIN;
}

int sched_get_priority_max(int policy)
{
    if (policy != SCHED_FIFO && policy != SCHED_RR && policy != SCHED_OTHER) {
        return fail(EINVAL);
    }
    return RT_PRIO_MAX;
}

int sched_getparam(pid_t pid, struct sched_param *param)
{
    if (param == NULL) {
        return fail(EINVAL);
    }
    if (!own_process(pid)) {
        return fail(ESRCH);
    }
    int policy;
    int err = pthread_getschedparam(pthread_self(), &policy, param);
    return err != 0 ? fail(err) : 0;
}

int sched_setparam(pid_t pid, const struct sched_param *param)
{
    if (param == NULL) {
        return fail(EINVAL);
    }
    if (!own_process(pid)) {
        return fail(ESRCH);
    }
    int err = pthread_setschedprio(pthread_self(), param->sched_priority);
    return err != 0 ? fail(err) : 0;
}

int sched_getscheduler(pid_t pid)
{
    if (!own_process(pid)) {
        return fail(ESRCH);
    }
    int policy;
    struct sched_param param;
    int err = pthread_getschedparam(pthread_self(), &policy, &param);
    return err != 0 ? fail(err) : policy;
}

int sched_setscheduler(pid_t pid, int policy, const struct sched_param *param)
{
    if (param == NULL) {
        return fail(EINVAL);
    }
    if (!own_process(pid)) {
        return fail(ESRCH);
    }
    int old;
    struct sched_param cur;
    int err = pthread_getschedparam(pthread_self(), &old, &cur);
    if (err == 0) {
        err = pthread_setschedparam(pthread_self(), policy, param);
    }
    return err != 0 ? fail(err) : old;
}

int sched_rr_get_interval(pid_t pid, struct timespec *interval)
{
    if (interval == NULL) {
        return fail(EINVAL);
    }
    if (!own_process(pid)) {
        return fail(ESRCH);
    }
    *interval = posix_ns_timespec((rt_time_t)RTMUX_SCHED_RR_INTERVAL_NS);
    return 0;
}
