/*
 * The physical PL011 console UART. The hypervisor owns it; only core/console.c writes and only the
 * console CPU reads.
 */
#include "drivers/pl011.h"

#include <stdint.h>

#include "arm64/pl011.h"
#include "board.h"

static inline volatile uint32_t *uart(uintptr_t off)
{
    return (volatile uint32_t *)(BOARD_UART_BASE + off);
}

void pl011_init(void)
{
    *uart(PL011_IMSC) = 0;
    *uart(PL011_CR) |= PL011_CR_UARTEN | PL011_CR_TXE | PL011_CR_RXE;
}

bool pl011_tx_full(void)
{
    return (*uart(PL011_FR) & PL011_FR_TXFF) != 0;
}

void pl011_tx(char c)
{
    *uart(PL011_DR) = (uint32_t)(unsigned char)c;
}

void pl011_rx_irq_enable(void)
{
    *uart(PL011_IMSC) = PL011_INT_RX | PL011_INT_RT;
}

void pl011_rx_irq_clear(void)
{
    *uart(PL011_ICR) = PL011_INT_RX | PL011_INT_RT;
}

bool pl011_rx_empty(void)
{
    return (*uart(PL011_FR) & PL011_FR_RXFE) != 0;
}

char pl011_getc(void)
{
    return (char)(*uart(PL011_DR) & PL011_DR_DATA);
}
