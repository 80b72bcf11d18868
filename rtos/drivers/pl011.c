/*
 * PL011 UART, transmit only, polled. The boot firmware (or QEMU, or the rtmux virtual UART) has set
 * the baud rate; the rtos only makes sure the transmitter is enabled.
 */
#include "pl011.h"

#include <stdint.h>

#include "board.h"

#define UARTDR        0x000u
#define UARTFR        0x018u
#define UARTFR_TXFF   (1u << 5)
#define UARTCR        0x030u
#define UARTCR_UARTEN (1u << 0)
#define UARTCR_TXE    (1u << 8)
#define UARTIMSC      0x038u

static inline volatile uint32_t *uart(uintptr_t off)
{
    return (volatile uint32_t *)(BOARD_UART_BASE + off);
}

void pl011_init(void)
{
    *uart(UARTIMSC) = 0; /* polled: no UART interrupts */
    *uart(UARTCR) |= UARTCR_UARTEN | UARTCR_TXE;
}

void pl011_putc(char c)
{
    while (*uart(UARTFR) & UARTFR_TXFF) {
    }
    *uart(UARTDR) = (uint32_t)(unsigned char)c;
}
