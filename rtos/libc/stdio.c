/*
 * stdin, stdout and stderr of the C library (picolibc's tiny stdio) on the rtos console.
 *
 * Output is line-buffered per thread: each thread collects its characters in its own thread-local
 * line and hands a whole line to the console in one rt_console_write, so lines of different threads
 * never mix and no lock is taken per character. A line longer than LINE_MAX_BYTES is written in
 * pieces; fflush() writes a partial line. stderr shares the line: an unfinished stdout line and an
 * error message of the same thread come out in the order they were written. An interrupt handler's
 * output lands in the line of the thread it interrupted (use rt_printf there).
 *
 * Each line goes to Linux's log too when the system configuration keeps one (linuxsvc/log.c).
 *
 * stdin reads end of file: the rtos console has no input.
 */
#include <stdio.h>

#include "libc.h"
#include "linuxsvc/log.h"
#include "rtos/console.h"

/* One console line per call: long enough for a 132-column line with its newline. */
#define LINE_MAX_BYTES 160u

static __thread struct {
    unsigned len;
    char buf[LINE_MAX_BYTES];
} line;

static int line_flush(FILE *f)
{
    (void)f;
    if (line.len != 0) {
        rt_console_write(line.buf, line.len);
        lsvc_log_write(line.buf, line.len); /* and to Linux's log, when the system keeps one */
        line.len = 0;
    }
    return 0;
}

static int line_put(char c, FILE *f)
{
    line.buf[line.len++] = c;
    if (c == '\n' || line.len == LINE_MAX_BYTES) {
        (void)line_flush(f);
    }
    return (unsigned char)c;
}

static int no_input(FILE *f)
{
    (void)f;
    return EOF;
}

static FILE console = FDEV_SETUP_STREAM(line_put, no_input, line_flush, _FDEV_SETUP_RW);

FILE *const stdin = &console;
FILE *const stdout = &console;
FILE *const stderr = &console;

void rtmux_console_write(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        (void)line_put(s[i], &console);
    }
}

void rtmux_console_flush(void)
{
    (void)line_flush(&console);
}
