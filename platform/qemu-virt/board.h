/*
 * QEMU virt (QEMU 7.2, gic-version=3 or 2, virtualization=on): the board facts the rtos, the hypervisor,
 * both linker scripts, the test guests and the host unit tests use. What the board's device tree says
 * (RAM base, the GIC's frames of both layouts, the maintenance and timer PPIs, the console UART and its
 * driver) is in board_desc.h, generated from the board's descriptions platform/qemu-virt/board.toml and
 * platform/qemu-virt-gicv2/board.toml by the build (tools/rtmux/boarddesc.py; the Makefile puts its
 * folder on the include path); this file adds what no device tree says. The tools' board
 * (tools/rtmux/board.py) takes the same descriptions; tests/unit/python/test_board_header.py compares the
 * two. Inside an rtmux partition the hypervisor presents the same addresses as intermediate physical
 * addresses. Usable from C, assembly and linker scripts (no C-only suffixes on addresses the linker
 * scripts use).
 */
#ifndef BOARD_H
#define BOARD_H

#include "board_desc.h"

/* Images with the arm64 Image header are loaded BOARD_TEXT_OFFSET above the start of RAM (the header's
 * text_offset), which is where both images are linked. */
#define BOARD_TEXT_OFFSET 0x80000
#define BOARD_LINK_ADDR   (BOARD_RAM_BASE + BOARD_TEXT_OFFSET)

/* GICv3: redistributor frames the rtos scans for its CPU's affinity (it stops at the Last frame). */
#define BOARD_GICR_MAX 32u

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

#endif /* BOARD_H */
