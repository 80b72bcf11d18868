/*
 * Built-in configuration for QEMU virt: the rtos alone on CPU 0, in a partition, with its image from
 * the hypervisor's payload. (The TOML-driven configuration blob replaces this table.)
 */
#include "hyp/config.h"

#include "board.h"
#include <stddef.h>

extern const uint8_t payload_rtos[], payload_rtos_end[];
/* Weak: absent (address 0) in images without them. */
extern const uint8_t payload_rtos_dtb[] __attribute__((weak)), payload_rtos_dtb_end[] __attribute__((weak));
extern const uint8_t payload_linux_kernel[] __attribute__((weak)),
    payload_linux_kernel_end[] __attribute__((weak));
extern const uint8_t payload_linux_initrd[] __attribute__((weak)),
    payload_linux_initrd_end[] __attribute__((weak));
extern const uint8_t payload_linux_dtb[] __attribute__((weak)), payload_linux_dtb_end[] __attribute__((weak));

#define LINUX_RAM_PA     0x50000000ul /* IPA = PA: Linux's DTB describes its real addresses */
#define LINUX_RAM_SIZE   0x20000000ul /* 512 MiB */
#define LINUX_DTB_OFF    0x07e00000ul /* DTB and initrd above any kernel image (Image text + BSS < 126 MiB) */
#define LINUX_INITRD_OFF 0x08000000ul

/* The arm64 Image header's text_offset (bytes 8..15, little-endian). */
static uint64_t image_text_offset(const uint8_t *img)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < 8; i++) {
        v |= (uint64_t)img[8 + i] << (8u * i);
    }
    return v;
}

#define RTOS_RAM_PA   0x48000000ul /* above the hypervisor and its payload */
#define RTOS_RAM_SIZE 0x01000000ul /* 16 MiB */
#define RTOS_IPA      0x40000000ul /* where the rtos is linked to find its RAM, as on bare metal */

unsigned config_load(struct partition *parts, unsigned max)
{
    if (max < 1) {
        return 0;
    }
    struct partition *p = &parts[0];
    p->name = "rtos";
    p->tag = "rtos";
    p->kind = PART_RTOS;
    p->cpu_mask = 1u << 0;
    p->ram_ipa = RTOS_IPA;
    p->ram_pa = RTOS_RAM_PA;
    p->ram_size = RTOS_RAM_SIZE;
    /* Its own redistributor (RD_base + SGI_base of CPU 0): direct access, no trap. */
    p->dev[0] = (struct mmio_range){BOARD_GICR_BASE, BOARD_GICR_BASE, BOARD_GICR_STRIDE};
    p->ndev = 1;
    p->kernel = payload_rtos;
    p->kernel_size = (uint64_t)(payload_rtos_end - payload_rtos);
    p->kernel_ipa = RTOS_IPA + image_text_offset(p->kernel);
    if (payload_rtos_dtb != NULL) {
        /* Below the image (text_offset 512 KiB), where the rtos keeps nothing. */
        p->dtb = payload_rtos_dtb;
        p->dtb_size = (uint64_t)(payload_rtos_dtb_end - payload_rtos_dtb);
        p->dtb_ipa = RTOS_IPA;
    }
    if (payload_linux_kernel == NULL || max < 2) {
        return 1;
    }
    p = &parts[1];
    p->name = "linux";
    p->tag = "linux";
    p->kind = PART_LINUX;
    p->cpu_mask = 1u << 1;
    p->ram_ipa = LINUX_RAM_PA;
    p->ram_pa = LINUX_RAM_PA;
    p->ram_size = LINUX_RAM_SIZE;
    p->ndev = 0; /* GIC and UART accesses all trap; nothing else is assigned yet */
    p->kernel = payload_linux_kernel;
    p->kernel_size = (uint64_t)(payload_linux_kernel_end - payload_linux_kernel);
    p->kernel_ipa = LINUX_RAM_PA + image_text_offset(p->kernel);
    p->initrd = payload_linux_initrd;
    p->initrd_size = (uint64_t)(payload_linux_initrd_end - payload_linux_initrd);
    p->initrd_ipa = LINUX_RAM_PA + LINUX_INITRD_OFF;
    p->dtb = payload_linux_dtb;
    p->dtb_size = (uint64_t)(payload_linux_dtb_end - payload_linux_dtb);
    p->dtb_ipa = LINUX_RAM_PA + LINUX_DTB_OFF;
    return 2;
}
