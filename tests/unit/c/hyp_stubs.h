/*
 * What host tests of the hypervisor's pure modules link instead of the console: hyp_panic records its
 * message and, when a test expects it (HYP_EXPECT_PANIC), jumps back instead of stopping the process.
 */
#ifndef UNIT_HYP_STUBS_H
#define UNIT_HYP_STUBS_H

#include <setjmp.h>
#include <stdbool.h>

extern char hyp_panic_msg[512];
/* What hyp_printf wrote lately (cleared by the tests that look at it), and whether it also goes to
 * stdout. */
extern char hyp_log[8192];
extern bool hyp_log_quiet;
extern jmp_buf *hyp_panic_jmp;

/* Runs stmt; true if it called hyp_panic (message in hyp_panic_msg). */
#define HYP_EXPECT_PANIC(stmt)          \
    ({                                  \
        jmp_buf env_;                   \
        volatile bool panicked_ = true; \
        hyp_panic_msg[0] = '\0';        \
        if (setjmp(env_) == 0) {        \
            hyp_panic_jmp = &env_;      \
            stmt;                       \
            panicked_ = false;          \
        }                               \
        hyp_panic_jmp = NULL;           \
        panicked_;                      \
    })

#endif /* UNIT_HYP_STUBS_H */
