/*
 * HYP_ASSERT: an invariant the code relies on. A false one stops the machine naming file and line:
 * continuing with broken hypervisor state could let one partition reach another. Always compiled in
 * (none is on a partition's hot path); host unit tests link their own hyp_panic.
 */
#ifndef HYP_ASSERT_H
#define HYP_ASSERT_H

#include "hyp/printf.h"

#define HYP_ASSERT(cond)                                                           \
    do {                                                                           \
        if (!(cond)) {                                                             \
            hyp_panic("assertion failed at %s:%d: %s", __FILE__, __LINE__, #cond); \
        }                                                                          \
    } while (0)

#endif /* HYP_ASSERT_H */
