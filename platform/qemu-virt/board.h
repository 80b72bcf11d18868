/*
 * QEMU virt (QEMU 7.2, gic-version=3 or 2, virtualization=on): the board facts the rtos, the hypervisor and
 * both linker scripts use. The one C source of them; tools/rtmux's board description must agree
 * (tests/unit/python/test_board_header.py compares the two). Inside an rtmux partition the hypervisor
 * presents the same addresses as intermediate physical addresses. Usable from C, assembly and linker
 * scripts (no C-only suffixes on addresses the linker scripts use).
 */
#ifndef BOARD_H
#define BOARD_H

#define BOARD_NAME "qemu-virt"

/* RAM starts here; images with the arm64 Image header are loaded BOARD_TEXT_OFFSET above it (the
 * header's text_offset), which is where both images are linked. */
#define BOARD_RAM_BASE    0x40000000
#define BOARD_TEXT_OFFSET 0x80000
#define BOARD_LINK_ADDR   (BOARD_RAM_BASE + BOARD_TEXT_OFFSET)

/* GICv3: one distributor, redistributor frames from GICR_BASE one BOARD_GICR_STRIDE apart, in CPU
 * (Aff0) order. */
#define BOARD_GICD_BASE   0x08000000ul
#define BOARD_GICR_BASE   0x080a0000ul
#define BOARD_GICR_STRIDE 0x20000ul /* RD_base frame then SGI_base frame, 64 KiB each */
#define BOARD_GICR_MAX    32u       /* frames the rtos scans for its CPU's affinity (stops at Last) */

/* GICv2 (gic-version=2): the distributor at the same address, then the CPU interface (8 KiB), the
 * virtual interface control (GICH) and the virtual CPU interface (GICV); maintenance PPI as on GICv3.
 * Both layouts are the board's: the drivers pick the one the CPU reports (ID_AA64PFR0_EL1.GIC), and the
 * tools' board variant qemu-virt-gicv2 starts QEMU with it. */
#define BOARD_GICC_BASE 0x08010000ul
#define BOARD_GICH_BASE 0x08030000ul
#define BOARD_GICV_BASE 0x08040000ul

/* PL011 console UART, SPI 1. BOARD_UART_DRIVER names the driver of the board's console UART: the
 * Makefile reads it from this line and compiles hyp/drivers/NAME.c and rtos/drivers/NAME.c (the
 * interface drivers/uart.h), no other UART driver: "pl011" or "imx_uart". */
#define BOARD_UART_DRIVER "pl011"
#define BOARD_UART_BASE   0x09000000ul
#define BOARD_UART_SIZE   0x1000ul
#define BOARD_UART_INTID  33u

/* PL031 real-time clock, SPI 2 (level): a device a partition can be given whole. */
#define BOARD_RTC_BASE  0x09010000ul
#define BOARD_RTC_SIZE  0x1000ul
#define BOARD_RTC_INTID 34u

/* SMMUv3 (present with -M virt,iommu=smmuv3): the IOMMU in front of the PCIe host, owned by the
 * hypervisor. */
#define BOARD_SMMU_BASE 0x09050000ul
#define BOARD_SMMU_SIZE 0x20000ul

/* The V-Bus's virtio-mmio device (lib/vbus.h, hyp/core/vbus.c), which the hypervisor emulates in the
 * Linux partition. Its register page is the first after QEMU's 32 virtio-mmio transports
 * (0x0a000000..0x0a004000), in the range QEMU virt leaves empty up to its platform bus (0x0c000000): no
 * RAM and no device Linux could be given is there; stage 2 traps the whole page, the registers use
 * 0x200 bytes of it. Its interrupt is SPI 192, virtual and level-sensitive (asserted while the
 * device's InterruptStatus is non-zero): QEMU virt 7.2 raises SPIs 1..9, 16..47, 74..77 and 112..175
 * only, so no physical line ever drives this one, and it lies below the 256 SPIs of the distributor,
 * whose GICD_TYPER a partition reads (INTIDs up to 287). */
#define BOARD_VBUS_BASE  0x0a004000ul
#define BOARD_VBUS_SIZE  0x1000ul
#define BOARD_VBUS_INTID 224u

/* Generic timer PPIs (the board's DTB /timer node: secure 29, EL1 physical 30, virtual 27, EL2 26) and
 * the GIC maintenance PPI (25). */
#define BOARD_INTID_GIC_MAINT  25u
#define BOARD_INTID_HYP_TIMER  26u
#define BOARD_INTID_VIRT_TIMER 27u
#define BOARD_INTID_PHYS_TIMER 30u

#endif /* BOARD_H */
