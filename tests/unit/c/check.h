/*
 * Minimal unit-test checks: CHECK records a failure with file/line and keeps going; main returns
 * non-zero if anything failed.
 */
#ifndef UNIT_CHECK_H
#define UNIT_CHECK_H

#include <stdio.h>

static int unit_failures;
static int unit_checks;

#define CHECK(cond)                                                                  \
    do {                                                                             \
        unit_checks++;                                                               \
        if (!(cond)) {                                                               \
            unit_failures++;                                                         \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                            \
    } while (0)

#define UNIT_DONE(name)                                                         \
    do {                                                                        \
        printf("%s: %d checks, %d failed\n", name, unit_checks, unit_failures); \
        return unit_failures != 0;                                              \
    } while (0)

#endif /* UNIT_CHECK_H */
