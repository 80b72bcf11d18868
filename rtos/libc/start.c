/*
 * Start-up of an application linked with the C library: the rtos's rt_main (run by the kernel in its
 * "main" thread) sets up the C library, runs the constructors, starts main() in a thread of its own
 * (rtmux/main.h) and, when main() returns, exits with its value.
 */
#include <stdint.h>
#include <stdlib.h>

#include "libc.h"
#include "rtmux/main.h"
#include "rtos/console.h"
#include "rtos/system.h"
#include "rtos/thread.h"

int main(int argc, char *argv[]);

/* The defaults, replaced by an application's RTMUX_MAIN_THREAD. */
__attribute__((weak))
const struct rtmux_main_thread rtmux_main_thread = {RTMUX_MAIN_PRIORITY, RTMUX_MAIN_STACK_SIZE};

typedef void (*init_fn)(void);
extern init_fn __preinit_array_start[], __preinit_array_end[], __init_array_start[], __init_array_end[];

static char program_name[] = "rtos";
static char *main_argv[] = {program_name, NULL};
static int main_status;

static void main_entry(void *arg)
{
    (void)arg;
    main_status = main(1, main_argv);
    exit(main_status);
}

void rt_main(void)
{
    rtmux_libc_locks_init();
    for (init_fn *f = __preinit_array_start; f < __preinit_array_end; f++) {
        (*f)();
    }
    for (init_fn *f = __init_array_start; f < __init_array_end; f++) {
        (*f)();
    }
    const struct rtmux_main_thread *cfg = &rtmux_main_thread;
    size_t size = (cfg->stack_size + 15u) & ~(size_t)15u;
    static rt_thread_t thread;
    void *stack = aligned_alloc(16, size);
    if (stack == NULL) {
        rt_printf("rtos: main's stack of %lu bytes does not fit in the heap (HEAP_SIZE)\n",
                  (unsigned long)size);
        rt_panic("no stack for main");
    }
    int rc = rt_thread_create(&thread, "main", main_entry, NULL, stack, size, (unsigned)cfg->priority);
    if (rc != RT_OK) {
        rt_printf("rtos: RTMUX_MAIN_THREAD(%d, %lu): %s\n", cfg->priority, (unsigned long)size,
                  rt_strerror(rc));
        rt_panic("cannot start main");
    }
    /* This thread has nothing more to do; main's thread ends the system through exit(). */
}
