/*
 * Arm PrimeCell PL031 real-time clock registers (DDI 0224). Definitions only. The interrupt line is
 * the raw status masked by IMSC (RIS & IMSC = MIS), so it stays asserted until ICR clears RIS or IMSC
 * masks it: a level-triggered source.
 */
#ifndef ARM64_PL031_H
#define ARM64_PL031_H

#include "arm64/bits.h"

#define PL031_DR   0x000u /* current count, seconds (read only) */
#define PL031_MR   0x004u /* match: the alarm raises RIS when DR reaches it */
#define PL031_LR   0x008u /* load: sets the count */
#define PL031_CR   0x00cu /* start */
#define PL031_IMSC 0x010u /* interrupt mask set/clear: 1 lets RIS drive the line */
#define PL031_RIS  0x014u /* raw interrupt status */
#define PL031_MIS  0x018u /* masked status: the line's level */
#define PL031_ICR  0x01cu /* writing 1 clears RIS */

#define PL031_INT BIT32(0) /* the one interrupt (the alarm), in IMSC, RIS, MIS and ICR */

#endif /* ARM64_PL031_H */
