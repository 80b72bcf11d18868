/*
 * The POSIX tests' checks: each test is an rtos application (built with the SDK) that ends with
 * POSIX_TEST_END, printing "NAME: P passed, F failed" and exiting with F (0 = all passed); a failed
 * check prints its file, line and expression. tests/system/test_posix.py boots each bare and in rtmux.
 */
#ifndef POSIX_TEST_CHECK_H
#define POSIX_TEST_CHECK_H

#include <stdio.h>

static int check_passed, check_failed;

#define CHECK(cond)                                                \
    do {                                                           \
        if (cond) {                                                \
            check_passed++;                                        \
        } else {                                                   \
            check_failed++;                                        \
            printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); \
        }                                                          \
    } while (0)

/* An int-returning call and the value it must return, printed when it differs. */
#define CHECK_EQ(expr, want)                                                                      \
    do {                                                                                          \
        long check_got_ = (long)(expr), check_want_ = (long)(want);                               \
        if (check_got_ == check_want_) {                                                          \
            check_passed++;                                                                       \
        } else {                                                                                  \
            check_failed++;                                                                       \
            printf("FAIL %s:%d: %s = %ld, expected %ld\n", __FILE__, __LINE__, #expr, check_got_, \
                   check_want_);                                                                  \
        }                                                                                         \
    } while (0)

#define POSIX_TEST_END(name)                                                      \
    do {                                                                          \
        printf("%s: %d passed, %d failed\n", (name), check_passed, check_failed); \
        return check_failed;                                                      \
    } while (0)

#endif /* POSIX_TEST_CHECK_H */
