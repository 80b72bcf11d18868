/*
 * Arm PrimeCell PL011 UART registers (DDI 0183). Definitions only: the hypervisor's physical driver,
 * its emulated UART and the rtos driver all use these.
 */
#ifndef ARM64_PL011_H
#define ARM64_PL011_H

#include "arm64/bits.h"

#define PL011_DR        0x000u
#define PL011_RSR       0x004u
#define PL011_FR        0x018u
#define PL011_ILPR      0x020u
#define PL011_IBRD      0x024u
#define PL011_FBRD      0x028u
#define PL011_LCR_H     0x02cu
#define PL011_CR        0x030u
#define PL011_IFLS      0x034u
#define PL011_IMSC      0x038u
#define PL011_RIS       0x03cu
#define PL011_MIS       0x040u
#define PL011_ICR       0x044u
#define PL011_DMACR     0x048u
#define PL011_PERIPHID0 0xfe0u /* PeriphID0..3 then PCellID0..3, one byte per word */
#define PL011_ID_WORDS  8u
#define PL011_DR_DATA   0xffu /* received/transmitted character; [11:8] are error flags */

#define PL011_FR_RXFE BIT32(4) /* receive FIFO empty */
#define PL011_FR_TXFF BIT32(5) /* transmit FIFO full */
#define PL011_FR_TXFE BIT32(7) /* transmit FIFO empty */

#define PL011_CR_UARTEN BIT32(0)
#define PL011_CR_TXE    BIT32(8)
#define PL011_CR_RXE    BIT32(9)

/* Interrupt bits, the same in IMSC, RIS, MIS and ICR. */
#define PL011_INT_RX BIT32(4)
#define PL011_INT_TX BIT32(5)
#define PL011_INT_RT BIT32(6) /* receive timeout */

/* Reset values the emulated UART presents (DDI 0183, 3.2): IFLS = 1/2 full both ways. */
#define PL011_IFLS_RESET 0x12u

#endif /* ARM64_PL011_H */
