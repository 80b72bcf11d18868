/*
 * The console UART when it is an Arm PL011 (drivers/uart.h; board.h's BOARD_UART_DRIVER "pl011"):
 * transmit only, polled. The boot firmware (or QEMU, or the rtmux virtual UART) has set the baud rate;
 * the rtos only makes sure the transmitter is enabled.
 */
#include "drivers/uart.h"

#include <stdint.h>

#include "arm64/pl011.h"
#include "board.h"

static inline volatile uint32_t *uart(uintptr_t off)
{
    return (volatile uint32_t *)(BOARD_UART_BASE + off);
}

void uart_init(void)
{
    *uart(PL011_IMSC) = 0; /* polled: no UART interrupts */
    *uart(PL011_CR) |= PL011_CR_UARTEN | PL011_CR_TXE;
}

void uart_putc(char c)
{
    while (*uart(PL011_FR) & PL011_FR_TXFF) {
    }
    *uart(PL011_DR) = (uint32_t)(unsigned char)c;
}
