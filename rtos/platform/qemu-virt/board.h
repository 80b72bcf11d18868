/*
 * QEMU virt board (QEMU 7.2, gic-version=3): the physical addresses the rtos drivers use. Inside an
 * rtmux partition the hypervisor presents the same addresses (intermediate physical addresses).
 */
#ifndef BOARD_H
#define BOARD_H

#define BOARD_NAME        "qemu-virt"
#define BOARD_GICD_BASE   0x08000000ul
#define BOARD_GICR_BASE   0x080a0000ul
#define BOARD_GICR_STRIDE 0x20000ul /* RD_base frame then SGI_base frame, 64 KiB each */
#define BOARD_GICR_MAX    32u       /* redistributor frames scanned for this CPU's affinity */
#define BOARD_UART_BASE   0x09000000ul
#define BOARD_UART_INTID  33u /* SPI 1 */

#endif /* BOARD_H */
