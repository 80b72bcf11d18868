/*
 * Start-up of an application linked with the C library: the rtos's rt_main (run by the kernel in its
 * "main" thread) sets up the C library, runs the constructors, starts main() in a POSIX thread of its
 * own (rtmux/main.h; so pthread_self, pthread_exit and pthread_join work with it) and, when main()
 * returns, exits with its value.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "../posix/pthread_impl.h"
#include "libc.h"
#include "linuxsvc/files.h"
#include "linuxsvc/log.h"
#include "rtmux/main.h"
#include "rtos/console.h"
#include "rtos/system.h"
#include "rtos/thread.h"
#include "rtos/threadstat.h"

int main(int argc, char *argv[]);

/* The defaults, replaced by an application's RTMUX_MAIN_THREAD. */
__attribute__((weak))
const struct rtmux_main_thread rtmux_main_thread = {RTMUX_MAIN_PRIORITY, RTMUX_MAIN_STACK_SIZE};

typedef void (*init_fn)(void);
extern init_fn __preinit_array_start[], __preinit_array_end[], __init_array_start[], __init_array_end[];

static char program_name[] = "rtos";
static char *main_argv[] = {program_name, NULL};
static int main_status;

static void *main_entry(void *arg)
{
    (void)arg;
    main_status = main(1, main_argv);
    exit(main_status);
}

void rt_main(void)
{
    rtmux_libc_locks_init();
    lfs_init();
    lsvc_log_init();
    /* rtmux-top's server, when the configuration gives the channel ([services] threads): below every
     * application thread. Without the channel (RT_ENOENT) nothing runs and nothing is said. */
    int ts = rt_threadstat_start(RT_PRIO_MIN);
    if (ts != RT_OK && ts != RT_ENOENT) {
        rt_printf("rtos: thread statistics (%s) not served: %s\n", THREADSTAT_CHANNEL, rt_strerror(ts));
    }
    for (init_fn *f = __preinit_array_start; f < __preinit_array_end; f++) {
        (*f)();
    }
    for (init_fn *f = __init_array_start; f < __init_array_end; f++) {
        (*f)();
    }
    const struct rtmux_main_thread *cfg = &rtmux_main_thread;
    size_t size = (cfg->stack_size + 15u) & ~(size_t)15u;
    /* A joinable SCHED_FIFO thread at the configured priority; its stack comes from the heap. */
    pthread_attr_t attr;
    struct sched_param param = {.sched_priority = cfg->priority};
    int err = pthread_attr_init(&attr);
    if (err == 0) {
        err = pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
    }
    if (err == 0) {
        err = pthread_attr_setschedpolicy(&attr, SCHED_FIFO);
    }
    if (err == 0) {
        err = pthread_attr_setschedparam(&attr, &param);
    }
    if (err == 0) {
        err = pthread_attr_setstacksize(&attr, size);
    }
    pthread_t thread;
    if (err == 0) {
        err = posix_thread_create_named(&thread, &attr, main_entry, NULL, "main");
    }
    if (err != 0) {
        rt_printf("rtos: RTMUX_MAIN_THREAD(%d, %lu): %s\n", cfg->priority, (unsigned long)size,
                  err == EAGAIN ? "the stack does not fit in the heap (HEAP_SIZE)"
                                : "priority 1-255 and a stack of PTHREAD_STACK_MIN bytes or more");
        rt_panic("cannot start main");
    }
    /* This thread has nothing more to do; main's thread ends the system through exit(), or the last
     * POSIX thread through pthread_exit(). */
}
