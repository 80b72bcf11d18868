/*
 * <unistd.h>'s questions about the system: sysconf, and the user and group ids of the one process.
 *
 * sysconf answers an option of rtmux/posix_features.h with its version, any other option with -1
 * (errno unchanged: not supported), a limit with the layer's own value, or -1 for a limit the rtos
 * does not have (errno unchanged: no limit); a name it does not know is EINVAL. The application is one
 * process of one user with every privilege (it may set CLOCK_REALTIME): ids are 0.
 */
#include <errno.h>
#include <limits.h>
#include <mqueue.h>
#include <semaphore.h>
#include <time.h>
#include <unistd.h>

#if __has_include(<pthread.h>)
#include <pthread.h>
#endif

#define PAGE_SIZE  4096 /* the rtos's translation granule */
#define TIMERS_MAX 64   /* timer.c's slots (TIMER_MAX) */

struct sc_value {
    int name;
    long value;
};

/* Limits and the options the rtos implements; every other known name is -1. */
static const struct sc_value values[] = {
    {_SC_VERSION, 200809L},
    {_SC_CLK_TCK, CLOCKS_PER_SEC}, /* the unit of times() (rtos/libc/syscalls.c) */
    {_SC_PAGESIZE, PAGE_SIZE},
    {_SC_NPROCESSORS_CONF, 1},
    {_SC_NPROCESSORS_ONLN, 1},
    {_SC_MQ_OPEN_MAX, MQ_OPEN_MAX},
    {_SC_MQ_PRIO_MAX, MQ_PRIO_MAX},
    {_SC_SEM_VALUE_MAX, SEM_VALUE_MAX},
    {_SC_TIMER_MAX, TIMERS_MAX},
    {_SC_DELAYTIMER_MAX, INT_MAX},
#ifdef PTHREAD_KEYS_MAX
    {_SC_THREAD_KEYS_MAX, PTHREAD_KEYS_MAX},
#endif
#ifdef PTHREAD_DESTRUCTOR_ITERATIONS
    {_SC_THREAD_DESTRUCTOR_ITERATIONS, PTHREAD_DESTRUCTOR_ITERATIONS},
#endif
#ifdef PTHREAD_STACK_MIN
    {_SC_THREAD_STACK_MIN, PTHREAD_STACK_MIN},
#endif
    {_SC_THREADS, _POSIX_THREADS},
    {_SC_THREAD_ATTR_STACKADDR, _POSIX_THREAD_ATTR_STACKADDR},
    {_SC_THREAD_ATTR_STACKSIZE, _POSIX_THREAD_ATTR_STACKSIZE},
    {_SC_THREAD_PRIORITY_SCHEDULING, _POSIX_THREAD_PRIORITY_SCHEDULING},
    {_SC_THREAD_PRIO_INHERIT, _POSIX_THREAD_PRIO_INHERIT},
    {_SC_THREAD_PRIO_PROTECT, _POSIX_THREAD_PRIO_PROTECT},
    {_SC_THREAD_CPUTIME, _POSIX_THREAD_CPUTIME},
    {_SC_CPUTIME, _POSIX_CPUTIME},
    {_SC_THREAD_SAFE_FUNCTIONS, _POSIX_THREAD_SAFE_FUNCTIONS},
    {_SC_PRIORITY_SCHEDULING, _POSIX_PRIORITY_SCHEDULING},
    {_SC_TIMERS, _POSIX_TIMERS},
    {_SC_MONOTONIC_CLOCK, _POSIX_MONOTONIC_CLOCK},
    {_SC_CLOCK_SELECTION, _POSIX_CLOCK_SELECTION},
    {_SC_TIMEOUTS, _POSIX_TIMEOUTS},
    {_SC_SEMAPHORES, _POSIX_SEMAPHORES},
    {_SC_MESSAGE_PASSING, _POSIX_MESSAGE_PASSING},
    {_SC_BARRIERS, _POSIX_BARRIERS},
    {_SC_READER_WRITER_LOCKS, _POSIX_READER_WRITER_LOCKS},
    {_SC_SPIN_LOCKS, _POSIX_SPIN_LOCKS},
};

long sysconf(int name)
{
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        if (values[i].name == name) {
            return values[i].value;
        }
    }
    if (name < 0 || name > _SC_POSIX_26_VERSION) {
        errno = EINVAL;
    }
    return -1;
}

uid_t getuid(void)
{
    return 0;
}

uid_t geteuid(void)
{
    return 0;
}

gid_t getgid(void)
{
    return 0;
}

gid_t getegid(void)
{
    return 0;
}
