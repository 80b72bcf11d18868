/*
 * The C library in rtos threads: stdio to the console, malloc, errno per thread, math, snprintf with
 * floating point, constructors.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static int constructed;

__attribute__((constructor)) static void early(void)
{
    constructed = 42;
}

int main(void)
{
    CHECK(constructed == 42);
    char buf[64];
    snprintf(buf, sizeof(buf), "%.3f %5.1e %d %s", 3.14159, 12345.678, -7, "x");
    CHECK(strcmp(buf, "3.142 1.2e+04 -7 x") == 0);
    CHECK(fabs(sqrt(2.0) * sqrt(2.0) - 2.0) < 1e-12);
    CHECK(fabs(sin(M_PI / 6) - 0.5) < 1e-12);
    void *blocks[16];
    for (int i = 0; i < 16; i++) {
        blocks[i] = malloc(1000u * (unsigned)(i + 1));
        CHECK(blocks[i] != NULL);
        memset(blocks[i], i, 1000u * (unsigned)(i + 1));
    }
    for (int i = 0; i < 16; i++) {
        CHECK(((unsigned char *)blocks[i])[999] == i);
        free(blocks[i]);
    }
    CHECK(malloc((size_t)1 << 40) == NULL && errno == ENOMEM);
    errno = 0;
    CHECK(strtol("99999999999999999999", NULL, 10) == __LONG_MAX__ && errno == ERANGE);
    POSIX_TEST_END("libc");
}
