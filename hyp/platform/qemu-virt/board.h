/*
 * QEMU virt (7.2, gic-version=3, virtualization=on): the physical map the hypervisor relies on.
 */
#ifndef HYP_BOARD_H
#define HYP_BOARD_H

#define BOARD_RAM_BASE    0x40000000ul
#define BOARD_GICD_BASE   0x08000000ul
#define BOARD_GICD_SIZE   0x10000ul
#define BOARD_GICR_BASE   0x080a0000ul
#define BOARD_GICR_STRIDE 0x20000ul /* RD_base + SGI_base, 64 KiB each */
#define BOARD_UART_BASE   0x09000000ul
#define BOARD_UART_SIZE   0x1000ul
#define BOARD_UART_INTID  33u
#define BOARD_MAX_CPUS    8u

#endif /* HYP_BOARD_H */
