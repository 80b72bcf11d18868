/*
 * Host replacements for the hypervisor's console-level functions (see hyp_stubs.h).
 */
#include "hyp_stubs.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hyp/printf.h"

char hyp_panic_msg[512];
jmp_buf *hyp_panic_jmp;
uint64_t host_counter;

char hyp_log[8192];
bool hyp_log_quiet;

int hyp_printf(const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    size_t have = strlen(hyp_log), add = strlen(line);
    if (have + add >= sizeof(hyp_log)) {
        have = 0; /* keeps the latest output; tests clear it before what they look for */
    }
    memcpy(hyp_log + have, line, add + 1u);
    if (!hyp_log_quiet) {
        fputs(line, stdout);
    }
    return n;
}

int hyp_snprintf(char *buf, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, size, fmt, ap);
    va_end(ap);
    return n;
}

void hyp_panic(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    (void)vsnprintf(hyp_panic_msg, sizeof(hyp_panic_msg), fmt, ap);
    va_end(ap);
    if (hyp_panic_jmp != NULL) {
        longjmp(*hyp_panic_jmp, 1);
    }
    fprintf(stderr, "rtmux: PANIC: %s\n", hyp_panic_msg);
    exit(3);
}
