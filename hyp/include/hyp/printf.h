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
/* Prints "rtmux: PANIC: " and the message, then powers the machine off. */
void hyp_panic(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#endif /* HYP_PRINTF_H */
