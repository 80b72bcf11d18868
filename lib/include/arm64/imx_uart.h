/*
 * NXP i.MX UART registers, as on the i.MX 8M Plus (its DTB: "fsl,imx8mp-uart"): the i.MX 8M Plus
 * Applications Processor Reference Manual (IMX8MPRM), chapter "Universal Asynchronous
 * Receiver/Transmitter (UART)", register descriptions. Definitions only, and the one register accessor
 * both images' drivers use (hyp/drivers/imx_uart.c, rtos/drivers/imx_uart.c). Registers are 32 bits
 * wide, of which the low 16 are used.
 */
#ifndef ARM64_IMX_UART_H
#define ARM64_IMX_UART_H

#include <stdint.h>

#include "arm64/bits.h"

#define IMX_URXD  0x00u /* receiver: the RX FIFO's oldest character and its status; a read pops it */
#define IMX_UTXD  0x40u /* transmitter: a write pushes a character into the TX FIFO */
#define IMX_UCR1  0x80u
#define IMX_UCR2  0x84u
#define IMX_UCR3  0x88u
#define IMX_UCR4  0x8cu
#define IMX_UFCR  0x90u /* FIFO control; also the reference clock divider */
#define IMX_USR1  0x94u
#define IMX_USR2  0x98u
#define IMX_UESC  0x9cu
#define IMX_UTIM  0xa0u
#define IMX_UBIR  0xa4u /* baud rate: increment (with UBMR and UFCR.RFDIV: the divisor of the clock) */
#define IMX_UBMR  0xa8u /* baud rate: modulator */
#define IMX_UBRC  0xacu
#define IMX_ONEMS 0xb0u
#define IMX_UTS   0xb4u /* test register: the FIFOs' full and empty flags */

#define IMX_UART_FIFO_DEPTH 32u /* characters in each of the TX and RX FIFOs */

/* URXD: a character with CHARRDY clear is not one (the FIFO was empty). ERR is the OR of the four
 * error bits below it. */
#define IMX_URXD_CHARRDY BIT32(15)
#define IMX_URXD_ERR     BIT32(14)
#define IMX_URXD_OVRRUN  BIT32(13)
#define IMX_URXD_FRMERR  BIT32(12)
#define IMX_URXD_BRK     BIT32(11)
#define IMX_URXD_PRERR   BIT32(10)
#define IMX_URXD_DATA    0xffu

#define IMX_UCR1_ADEN     BIT32(15) /* automatic baud rate detection interrupt enable */
#define IMX_UCR1_TRDYEN   BIT32(13) /* transmitter ready (TX FIFO below TXTL) interrupt enable */
#define IMX_UCR1_IDEN     BIT32(12) /* idle line interrupt enable */
#define IMX_UCR1_RRDYEN   BIT32(9)  /* receiver ready (USR1.RRDY) interrupt enable */
#define IMX_UCR1_TXMPTYEN BIT32(6)  /* TX FIFO empty interrupt enable */
#define IMX_UCR1_RTSDEN   BIT32(5)  /* RTS delta interrupt enable */
#define IMX_UCR1_UARTEN   BIT32(0)
/* Every interrupt enable of UCR1. */
#define IMX_UCR1_IRQS \
    (IMX_UCR1_ADEN | IMX_UCR1_TRDYEN | IMX_UCR1_IDEN | IMX_UCR1_RRDYEN | IMX_UCR1_TXMPTYEN | IMX_UCR1_RTSDEN)

#define IMX_UCR2_ESCI  BIT32(15) /* escape sequence interrupt enable */
#define IMX_UCR2_IRTS  BIT32(14) /* ignore the RTS pin (no flow control on transmit) */
#define IMX_UCR2_WS    BIT32(5)  /* word size: 8 bits (clear: 7) */
#define IMX_UCR2_RTSEN BIT32(4)  /* RTS edge interrupt enable */
#define IMX_UCR2_ATEN  BIT32(3)  /* aging timer (USR1.AGTIM) interrupt enable */
#define IMX_UCR2_TXEN  BIT32(2)
#define IMX_UCR2_RXEN  BIT32(1)
/* Software reset, active low: writing 0 resets the state machines, both FIFOs and USR1, USR2, UBIR,
 * UBMR, UBRC, URXD, UTXD and UTS[6:3]; the bit reads 0 until the reset is over. Every write of UCR2
 * that is not meant to reset must have it set. */
#define IMX_UCR2_SRST BIT32(0)
/* Every interrupt enable of UCR2. */
#define IMX_UCR2_IRQS (IMX_UCR2_ESCI | IMX_UCR2_RTSEN | IMX_UCR2_ATEN)

#define IMX_UCR3_DTREN     BIT32(13) /* DTR interrupt enable */
#define IMX_UCR3_PARERREN  BIT32(12) /* parity error interrupt enable */
#define IMX_UCR3_FRAERREN  BIT32(11) /* frame error interrupt enable */
#define IMX_UCR3_RXDSEN    BIT32(6)  /* receiver idle interrupt enable */
#define IMX_UCR3_AIRINTEN  BIT32(5)  /* asynchronous IR wake interrupt enable */
#define IMX_UCR3_AWAKEN    BIT32(4)  /* asynchronous wake interrupt enable */
#define IMX_UCR3_DTRDEN    BIT32(3)  /* DTR delta interrupt enable */
#define IMX_UCR3_RXDMUXSEL BIT32(2)  /* the receiver's input is the muxed RXD pin: must be set to receive */
/* Every interrupt enable of UCR3. */
#define IMX_UCR3_IRQS                                                                               \
    (IMX_UCR3_DTREN | IMX_UCR3_PARERREN | IMX_UCR3_FRAERREN | IMX_UCR3_RXDSEN | IMX_UCR3_AIRINTEN | \
     IMX_UCR3_AWAKEN | IMX_UCR3_DTRDEN)

#define IMX_UCR4_ENIRI BIT32(8) /* serial infrared interrupt enable */
#define IMX_UCR4_WKEN  BIT32(7) /* wake interrupt enable */
#define IMX_UCR4_TCEN  BIT32(3) /* transmit complete (USR2.TXDC) interrupt enable */
#define IMX_UCR4_BKEN  BIT32(2) /* break interrupt enable */
#define IMX_UCR4_OREN  BIT32(1) /* receiver overrun interrupt enable */
#define IMX_UCR4_DREN  BIT32(0) /* receive data ready (USR2.RDR) interrupt enable */
/* Every interrupt enable of UCR4. */
#define IMX_UCR4_IRQS \
    (IMX_UCR4_ENIRI | IMX_UCR4_WKEN | IMX_UCR4_TCEN | IMX_UCR4_BKEN | IMX_UCR4_OREN | IMX_UCR4_DREN)

/* UFCR: TX trigger level [15:10], the reference clock's divider RFDIV [9:7] (part of the baud rate),
 * DCE/DTE mode [6], RX trigger level RXTL [5:0] (USR1.RRDY while the RX FIFO holds at least that many
 * characters). */
#define IMX_UFCR_TXTL_MASK (0x3fu << 10)
#define IMX_UFCR_RFDIV     (7u << 7)
#define IMX_UFCR_DCEDTE    BIT32(6)
#define IMX_UFCR_RXTL_MASK 0x3fu

/* USR1.RRDY and USR1.TRDY are levels (they follow the FIFOs' fill against the trigger levels): nothing
 * clears them but the FIFO's level. */
#define IMX_USR1_TRDY BIT32(13) /* TX FIFO below its trigger level */
#define IMX_USR1_RRDY BIT32(9)  /* RX FIFO at or above its trigger level */

#define IMX_USR2_TXFE BIT32(14) /* TX FIFO empty */
#define IMX_USR2_TXDC BIT32(3)  /* transmission complete: TX FIFO and shift register empty */
#define IMX_USR2_ORE  BIT32(1)  /* receiver overrun (write 1 to clear) */
#define IMX_USR2_RDR  BIT32(0)  /* receive data ready: at least one character in the RX FIFO */

#define IMX_UTS_TXEMPTY BIT32(6)
#define IMX_UTS_RXEMPTY BIT32(5)
#define IMX_UTS_TXFULL  BIT32(4) /* the TX FIFO holds IMX_UART_FIFO_DEPTH characters */

/*
 * A 32-bit access to the register at `off` of the UART at `base`. The drivers' host test
 * (tests/unit/c/test_imx_uart.c) defines IMX_UART_MODEL and provides these two functions itself, which
 * send every access to its model of the register file.
 */
#ifdef IMX_UART_MODEL
uint32_t imx_uart_read(uintptr_t base, uint32_t off);
void imx_uart_write(uintptr_t base, uint32_t off, uint32_t val);
#else
static inline uint32_t imx_uart_read(uintptr_t base, uint32_t off)
{
    return *(volatile uint32_t *)(base + off);
}

static inline void imx_uart_write(uintptr_t base, uint32_t off, uint32_t val)
{
    *(volatile uint32_t *)(base + off) = val;
}
#endif

#endif /* ARM64_IMX_UART_H */
