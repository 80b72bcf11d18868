/*
 * <unistd.h>'s questions about the system: sysconf (the options the rtos has, its limits, unknown
 * names), <limits.h>'s minimum values, and the ids of the one user.
 */
#include <errno.h>
#include <limits.h>
#include <mqueue.h>
#include <semaphore.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

int main(void)
{
    /* The options <unistd.h> declares are the ones sysconf reports, with the same version. */
    CHECK_EQ(sysconf(_SC_VERSION), 200809L);
    CHECK_EQ(sysconf(_SC_TIMERS), _POSIX_TIMERS);
    CHECK_EQ(sysconf(_SC_CPUTIME), _POSIX_CPUTIME);
    CHECK_EQ(sysconf(_SC_THREAD_CPUTIME), _POSIX_THREAD_CPUTIME);
    CHECK_EQ(sysconf(_SC_MONOTONIC_CLOCK), _POSIX_MONOTONIC_CLOCK);
    CHECK_EQ(sysconf(_SC_SEMAPHORES), _POSIX_SEMAPHORES);
    CHECK_EQ(sysconf(_SC_MESSAGE_PASSING), _POSIX_MESSAGE_PASSING);
    CHECK_EQ(sysconf(_SC_THREADS), _POSIX_THREADS);
    /* Limits. */
    CHECK_EQ(sysconf(_SC_MQ_OPEN_MAX), MQ_OPEN_MAX);
    CHECK_EQ(sysconf(_SC_MQ_PRIO_MAX), MQ_PRIO_MAX);
    CHECK_EQ(sysconf(_SC_SEM_VALUE_MAX), SEM_VALUE_MAX);
    CHECK(sysconf(_SC_TIMER_MAX) >= 32); /* _POSIX_TIMER_MAX */
    CHECK_EQ(sysconf(_SC_CLK_TCK), CLOCKS_PER_SEC);
    CHECK_EQ(sysconf(_SC_NPROCESSORS_ONLN), 1);
    /* An option the rtos lacks: -1, errno unchanged. An unknown name: EINVAL. */
    errno = 0;
    CHECK_EQ(sysconf(_SC_SPORADIC_SERVER), -1);
    CHECK_EQ(errno, 0);
    CHECK_EQ(sysconf(_SC_REALTIME_SIGNALS), -1);
    CHECK_EQ(errno, 0);
    CHECK_EQ(sysconf(-1), -1);
    CHECK_EQ(errno, EINVAL);
    errno = 0;
    CHECK_EQ(sysconf(100000), -1);
    CHECK_EQ(errno, EINVAL);
    /* <limits.h>: the standard's minimum values, which the rtos's own limits meet. */
    CHECK_EQ(_POSIX_OPEN_MAX, 20);
    CHECK_EQ(_POSIX_MQ_OPEN_MAX, 8);
    CHECK_EQ(_POSIX_TIMER_MAX, 32);
    CHECK(sysconf(_SC_MQ_OPEN_MAX) >= _POSIX_MQ_OPEN_MAX);
    CHECK(sysconf(_SC_MQ_PRIO_MAX) >= _POSIX_MQ_PRIO_MAX);
    CHECK(sysconf(_SC_SEM_VALUE_MAX) >= _POSIX_SEM_VALUE_MAX);
    CHECK(sysconf(_SC_TIMER_MAX) >= _POSIX_TIMER_MAX);
    CHECK(sysconf(_SC_DELAYTIMER_MAX) >= _POSIX_DELAYTIMER_MAX);
    CHECK(sysconf(_SC_THREAD_KEYS_MAX) >= _POSIX_THREAD_KEYS_MAX);
    CHECK(sysconf(_SC_THREAD_DESTRUCTOR_ITERATIONS) >= _POSIX_THREAD_DESTRUCTOR_ITERATIONS);
    /* One user, with every privilege. */
    CHECK_EQ(getuid(), 0);
    CHECK_EQ(geteuid(), 0);
    CHECK_EQ(getgid(), 0);
    CHECK_EQ(getegid(), 0);
    POSIX_TEST_END("unistd");
}
