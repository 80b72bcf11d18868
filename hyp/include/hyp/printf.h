/*
 * Formatted output and fatal errors of the hypervisor (core/printf.c).
 */
#ifndef HYP_PRINTF_H
#define HYP_PRINTF_H

#include <stdarg.h>
#include <stddef.h>

int hyp_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int hyp_vprintf(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));
int hyp_snprintf(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* What every message waits for first, when set (NULL: nothing): Linux's take-down on a CPU it shares
 * with the rtos gives the CPU to the rtos there when it is due (lifecycle.c). */
void hyp_print_set_pause(void (*fn)(void));
/* Prints "rtmux: PANIC: " and the message, then powers the machine off. */
void hyp_panic(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#endif /* HYP_PRINTF_H */
