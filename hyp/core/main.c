/*
 * Hypervisor start-up: console, configuration, interrupt controller, partitions and their emulated
 * devices, secondary CPUs; then each CPU enters the partition that owns it. The one place that knows
 * every module: it wires device models to partitions and interrupts to handlers.
 */
#include "arch/cpu.h"
#include "arch/entry.h"
#include "arch/firmware.h"
#include "arch/guest.h"
#include "arch/timer.h"
#include "arch/vgic.h"
#include "arch/vgicd.h"
#include "arm64/image.h"
#include "board.h"
#include "drivers/gic.h"
#include "hyp/blob.h"
#include "hyp/config.h"
#include "hyp/conmux.h"
#include "hyp/console.h"
#include "hyp/iommu.h"
#include "hyp/lifecycle.h"
#include "hyp/partition.h"
#include "hyp/printf.h"
#include "hyp/share.h"
#include "hyp/vbus.h"
#include "hyp/vcpu.h"

#define HYP_VERSION "0.1.0"

/* Linker-script symbols: the image's first byte, and its end, where ./rtmux appends the configuration blob.
 */
extern const uint8_t _start[], _end[];

static void cpu_init(unsigned cpu)
{
    struct vcpu *v = &hyp_vcpu[cpu];
    v->cpu = cpu;
    v->mpidr = arch_mpidr_affinity();
    gic_cpu_init(cpu);
    v->part = part_of_cpu(cpu);
    struct partition *shared = part_rtos_sharing(cpu);
    if (shared != NULL) {
        /* Shared-core mode: the rtos's virtual CPU beside Linux's (hyp/vcpu.h). */
        struct vcpu *r = &hyp_rtos_vcpu[cpu];
        r->cpu = cpu;
        r->mpidr = v->mpidr;
        r->part = shared;
    }
    if (v->part != NULL && v->part->kind == PART_LINUX) {
        vgic_cpu_init(v);
        if ((int)cpu == con_drain_cpu) {
            arch_hyp_timer_arm(CONMUX_TICK_HZ);
        }
    }
}

static void __attribute__((noreturn)) enter(unsigned cpu)
{
    struct vcpu *v = share_cpu(cpu) ? &hyp_rtos_vcpu[cpu] : &hyp_vcpu[cpu]; /* the rtos first */
    if (v->part == NULL) {
        hyp_printf("rtmux: CPU %u belongs to no partition; parked\n", cpu);
        for (;;) {
            arch_wfi();
        }
    }
    if (share_cpu(cpu)) {
        share_begin(cpu);
    }
    part_enter(v);
}

/* BLOB_FLAG_BOOT_REPORT: the el2-entries report still due at the first tick (only the drain CPU reads and
 * clears it). */
static bool boot_report_due;

/* The drain CPU's periodic tick: console output, then the IOMMU's fault records. */
static void hyp_tick(struct vcpu *v)
{
    if (boot_report_due) {
        boot_report_due = false;
        vcpu_report_entries();
    }
    conmux_tick(v);
    iommu_poll(CONMUX_TICK_HZ);
    share_tick();
}

/* The emulated devices every partition sees: its own UART, and the GIC filtered by ownership. */
static void register_mmio(struct partition *p)
{
    if (p->kind == PART_LINUX) {
        vgic_add_level(p, BOARD_UART_INTID, vuart_irq_line, &p->con.uart); /* the UART's line, virtual */
    }
    mmio_register(p, "uart", BOARD_UART_BASE, BOARD_UART_SIZE, conmux_uart_mmio, p);
    vgic_part_map(p);
    if (gic_version() == 3) {
        mmio_register(p, "gicd", BOARD_GICD_BASE, gic_dist_size(), vgicd_mmio, &vgicd_board);
        mmio_register(p, "gicr", BOARD_GICR_BASE, HYP_MAX_CPUS * BOARD_GICR_STRIDE, vgicr_mmio, &vgicd_board);
    } else {
        mmio_register(p, "gicd", BOARD_GICD_BASE, gic_dist_size(), vgicd_v2_mmio, &vgicd_board);
    }
}

void hyp_main(unsigned cpu, uint64_t dtb, uint64_t secondary_entry)
{
    (void)dtb;
    struct hyp_config config;
    con_init();
    hyp_printf("rtmux: hypervisor %s at EL2\n", HYP_VERSION);
    for (unsigned c = 0; c < HYP_MAX_CPUS; c++) {
        hyp_vcpu[c].mpidr = c; /* QEMU virt: Aff0 = CPU number; each CPU confirms in cpu_init */
    }
    /* ./rtmux rewrote the Image header's image_size to the whole bundle (hypervisor, blob, images). */
    uint64_t bundle_size = *(const uint64_t *)(const void *)(_start + ARM64_IMAGE_SIZE_OFFSET);
    hyp_nparts = config_parse(_end, BLOB_MAX_SIZE(HYP_MAX_PARTITIONS), (uint64_t)(uintptr_t)_start,
                              bundle_size, hyp_part, HYP_MAX_PARTITIONS, &config, &hyp_vbus);
    con_set_tags(config.console_tags);
    boot_report_due = config.boot_report;
    if (!mmu_el2_map_ram(config.ram_base, config.ram_size)) {
        hyp_panic("board RAM 0x%lx+0x%lx cannot be mapped (beyond a 39-bit address space)",
                  (unsigned long)config.ram_base, (unsigned long)config.ram_size);
    }
    vgicd_board.ncpus = config.board_cpus; /* redistributor frames beyond them do not exist */
    unsigned gic = gic_probe();
    if (gic != config.gic_version) {
        hyp_panic("this board has a GICv%u, but the configuration describes one with a GICv%u (on QEMU virt: "
                  "board \"qemu-virt\" is gic-version=3, \"qemu-virt-gicv2\" gic-version=2)",
                  gic, config.gic_version);
    }
    hyp_printf("rtmux: interrupt controller: GICv%u\n", gic);
    part_share_init();
    share_init();
    gic_dist_init();
    for (unsigned i = 0; i < hyp_nparts; i++) {
        part_setup(&hyp_part[i]);
        arch_part_irqs_init(&hyp_part[i]);
        register_mmio(&hyp_part[i]);
    }
    vbus_init(); /* its registers in the Linux partition's MMIO table, its rtos regions found */
    if (hyp_vbus.nchan != 0) {
        vgic_add_level(hyp_vbus.linux, hyp_vbus.intid, vbus_irq_line, NULL);
    }
    iommu_setup(); /* DMA is confined before any partition runs */
    vgic_set_hyp_irq(BOARD_INTID_HYP_TIMER, hyp_tick);
    vgic_set_hyp_irq(VBUS_SGI_TO_HYP, vbus_doorbell);
    vgic_set_hyp_irq(BOARD_UART_INTID, conmux_rx_irq);
    /* Console input is taken on a Linux CPU (interrupts trap to EL2 there), never on the rtos's. */
    conmux_init(config.console_focus, config.console_escape, config.console_focus_view);
    cpu_init(cpu);
    for (unsigned c = 1; c < HYP_MAX_CPUS; c++) {
        if (part_of_cpu(c) == NULL) {
            continue;
        }
        /* QEMU virt numbers CPUs by Aff0; a board with clusters would take MPIDRs from its config. */
        int64_t rc = fw_cpu_on(c, secondary_entry, c);
        if (rc != 0) {
            hyp_panic("PSCI CPU_ON for CPU %u failed (%ld): is it in the board?", c, (long)rc);
        }
    }
    enter(cpu);
}

void hyp_secondary(unsigned cpu)
{
    cpu_init(cpu);
    enter(cpu);
}
