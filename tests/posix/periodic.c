/*
 * A periodic loop at 1 kHz on absolute CLOCK_MONOTONIC deadlines (clock_nanosleep TIMER_ABSTIME):
 * over 10,000 periods it does not drift. Every wake-up is at or after its release point and the last
 * one lies within a bound of start + 10000 * period, however late the earlier ones were.
 */
#include <stdio.h>
#include <time.h>

#include "check.h"

#define PERIOD_NS 1000000L
#define PERIODS   10000
#define BOUND_NS  50000LL /* icount: the wake-up's instructions, far below it */

static long long mono_ns(void)
{
    struct timespec ts;
    (void)clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(void)
{
    struct timespec next;
    CHECK_EQ(clock_gettime(CLOCK_MONOTONIC, &next), 0);
    long long start = (long long)next.tv_sec * 1000000000LL + next.tv_nsec;
    long long worst = 0, woke = 0;
    int early = 0;
    for (int i = 1; i <= PERIODS; i++) {
        next.tv_nsec += PERIOD_NS;
        if (next.tv_nsec >= 1000000000L) {
            next.tv_nsec -= 1000000000L;
            next.tv_sec++;
        }
        if (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) != 0) {
            CHECK(0);
            break;
        }
        woke = mono_ns();
        long long late = woke - (start + (long long)i * PERIOD_NS);
        if (late < 0) {
            early++;
        } else if (late > worst) {
            worst = late;
        }
    }
    long long last = start + (long long)PERIODS * PERIOD_NS;
    printf("periodic: %d periods of %ld ns, last wake-up %lld ns after start + %d periods, worst %lld ns\n",
           PERIODS, PERIOD_NS, woke - last, PERIODS, worst);
    CHECK_EQ(early, 0);
    CHECK(woke >= last && woke < last + BOUND_NS);
    CHECK(worst < BOUND_NS);
    POSIX_TEST_END("periodic");
}
