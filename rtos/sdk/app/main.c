/*
 * @NAME@: an rtos application. main() runs in its own thread at the priority and with the stack
 * RTMUX_MAIN_THREAD gives; returning from it ends the system (the rtos's partition, under rtmux).
 */
#include <stdio.h>
#include <time.h>

#include <rtmux/main.h>

RTMUX_MAIN_THREAD(100, 16 * 1024);

#define PERIOD_NS 100000000L /* 10 Hz */
#define TICKS     10

int main(void)
{
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    for (int i = 1; i <= TICKS; i++) {
        next.tv_nsec += PERIOD_NS;
        if (next.tv_nsec >= 1000000000L) {
            next.tv_nsec -= 1000000000L;
            next.tv_sec++;
        }
        /* absolute deadlines: the loop does not drift, however long each pass takes */
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
        printf("@NAME@: tick %d of %d at %lld.%09ld s\n", i, TICKS, (long long)next.tv_sec, next.tv_nsec);
    }
    printf("@NAME@: done\n");
    return 0;
}
