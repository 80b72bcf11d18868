/*
 * The thread that runs main() in an rtos application built with the rtos SDK.
 *
 * main(argc, argv) runs in its own thread, at priority RTMUX_MAIN_PRIORITY with a stack of
 * RTMUX_MAIN_STACK_SIZE bytes taken from the heap, unless the application sets both, once, at file
 * scope:
 *
 *     RTMUX_MAIN_THREAD(90, 64 * 1024);
 *
 * The priority is a SCHED_FIFO priority (1 to 255, higher is more urgent, as sched_get_priority_min/
 * max say). Returning from main() calls exit() with its value, which powers the system (the rtos's
 * partition) off: end main() with pthread_exit() to keep the other threads running without it.
 */
#ifndef RTMUX_MAIN_H
#define RTMUX_MAIN_H

#include <stddef.h>

#define RTMUX_MAIN_PRIORITY   128
#define RTMUX_MAIN_STACK_SIZE (64u * 1024u)

struct rtmux_main_thread {
    int priority;
    size_t stack_size;
};

/* The application's choice, if it makes one (the C library's start-up has the defaults). */
extern const struct rtmux_main_thread rtmux_main_thread;

#define RTMUX_MAIN_THREAD(priority, stack_size) \
    const struct rtmux_main_thread rtmux_main_thread = {(priority), (stack_size)}

#endif /* RTMUX_MAIN_H */
