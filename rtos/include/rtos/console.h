/*
 * Console output (the board's UART, or the rtmux console ring) and formatting. Supported conversions:
 * %d %i %u %x %X %p %s %c %%, with flags '-' and '0', a field width, and the length modifiers l, ll, z.
 */
#ifndef RTOS_CONSOLE_H
#define RTOS_CONSOLE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Each call's output is written whole among threads: they never interleave inside one call. Usable
 * from any context. An interrupt handler's output lands between two calls of the thread it interrupted
 * when the console is the rtmux console ring (in a partition), but may land inside one on the bare
 * UART, whose characters are not written with interrupts masked (a real UART takes ~87 us for each
 * at 115200 baud). A line built from several calls can take another thread's or a handler's output in
 * its middle.
 */
int rt_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int rt_vsnprintf(char *buf, size_t size, const char *fmt, va_list ap);
int rt_snprintf(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void rt_puts(const char *s);
/* Writes n bytes as one call (the same guarantee as rt_printf's), for a C library's streams. */
void rt_console_write(const char *s, size_t n);

/* Formats ns as microseconds with 3 decimals ("-1.250"), as latency reports print them. */
int rt_fmt_us(char *buf, size_t size, int64_t ns);

#endif /* RTOS_CONSOLE_H */
