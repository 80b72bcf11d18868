/*
 * Console output (PL011) and formatting. Supported conversions: %d %i %u %x %X %p %s %c %%, with
 * flags '-' and '0', a field width, and the length modifiers l, ll, z.
 */
#ifndef RTOS_CONSOLE_H
#define RTOS_CONSOLE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* Lines are written whole: threads never interleave inside one call. Usable from any context. */
int rt_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int rt_vsnprintf(char *buf, size_t size, const char *fmt, va_list ap);
int rt_snprintf(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void rt_puts(const char *s);

/* Formats ns as microseconds with 3 decimals ("-1.250"), as latency reports print them. */
int rt_fmt_us(char *buf, size_t size, int64_t ns);

#endif /* RTOS_CONSOLE_H */
