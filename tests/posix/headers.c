/*
 * The SDK's POSIX headers declare no name an application may use for itself: this file includes them
 * all (and nothing of the rtos API) and then uses `bool`, `true`, `false` and rtos-like names as its
 * own identifiers, which a header that pulled in <stdbool.h> or an rtos header would break (the build
 * fails). At run time: the headers' constants are the standard's.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <limits.h>
#include <mqueue.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

/* Names that belong to the application: C99 without <stdbool.h>, and the rtos's own prefixes. */
struct names {
    int bool;
    int true;
    int false;
    int rt_sem_t;
    int rt_list_t;
    int RT_FOREVER;
};

int main(void)
{
    struct names n = {.bool = 1, .true = 2, .false = 3, .rt_sem_t = 4, .rt_list_t = 5, .RT_FOREVER = 6};
    CHECK_EQ(n.bool + n.true + n.false + n.rt_sem_t + n.rt_list_t + n.RT_FOREVER, 21);
    sem_t s;
    CHECK_EQ(sem_init(&s, 0, 2), 0);
    int v = 0;
    CHECK_EQ(sem_getvalue(&s, &v), 0);
    CHECK_EQ(v, 2);
    CHECK_EQ(sem_destroy(&s), 0);
    CHECK(SEM_VALUE_MAX >= _POSIX_SEM_VALUE_MAX);
    CHECK(MQ_PRIO_MAX >= _POSIX_MQ_PRIO_MAX);
    CHECK(SEM_FAILED == (sem_t *)0);
    POSIX_TEST_END("headers");
}
