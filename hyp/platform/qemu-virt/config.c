/*
 * Built-in configuration for QEMU virt: the rtos alone on CPU 0, in a partition, with its image from
 * the hypervisor's payload. (The TOML-driven configuration blob replaces this table.)
 */
#include "hyp/config.h"
#include "board.h"

extern const uint8_t payload_rtos[], payload_rtos_end[];

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
    p->kernel_ipa = RTOS_IPA + 0x80000u; /* the Image header's text_offset */
    return 1;
}
