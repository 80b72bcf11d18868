/*
 * Hypervisor start-up: console, interrupt controller, partitions, secondary CPUs, then each CPU enters
 * the partition that owns it.
 */
#include "arch/cpu.h"
#include "hyp/config.h"
#include "hyp/hyp.h"

#define HYP_VERSION "0.1.0"

struct vcpu hyp_vcpu[HYP_MAX_CPUS];
struct partition hyp_part[HYP_MAX_PARTITIONS];
unsigned hyp_nparts;

static void cpu_init(unsigned cpu)
{
    struct vcpu *v = &hyp_vcpu[cpu];
    v->cpu = cpu;
    v->mpidr = arch_mpidr_affinity();
    /* EL1 may use the GIC's system-register interface (both the physical and the virtual one). */
    ARCH_WR(ICC_SRE_EL2, ICC_SRE_SRE | ICC_SRE_ENABLE);
    arch_isb();
    v->part = NULL;
    for (unsigned i = 0; i < hyp_nparts; i++) {
        if (hyp_part[i].cpu_mask & (1ull << cpu)) {
            v->part = &hyp_part[i];
        }
    }
    if (v->part != NULL && v->part->kind == PART_LINUX) {
        vgic_cpu_init(v);
        if ((int)cpu == con_drain_cpu) {
            vgic_console_tick_start();
        }
    }
}

static void __attribute__((noreturn)) enter(unsigned cpu)
{
    struct vcpu *v = &hyp_vcpu[cpu];
    if (v->part == NULL) {
        hyp_printf("rtmux: CPU %u belongs to no partition; parked\n", cpu);
        for (;;) {
            __asm__ volatile("wfi");
        }
    }
    part_enter(v);
}

void hyp_main(unsigned cpu, uint64_t dtb)
{
    (void)dtb;
    con_init();
    hyp_printf("rtmux: hypervisor %s at EL2\n", HYP_VERSION);
    for (unsigned c = 0; c < HYP_MAX_CPUS; c++) {
        hyp_vcpu[c].mpidr = c; /* QEMU virt: Aff0 = CPU number; each CPU confirms in cpu_init */
    }
    hyp_nparts = config_load(hyp_part, HYP_MAX_PARTITIONS);
    gic_dist_init();
    for (unsigned i = 0; i < hyp_nparts; i++) {
        part_setup(&hyp_part[i]);
    }
    /* Console input is taken on a Linux CPU (interrupts trap to EL2 there), never on the rtos's. */
    con_focus = &hyp_part[config_console_focus];
    for (unsigned i = 0; i < hyp_nparts; i++) {
        if (hyp_part[i].kind == PART_LINUX) {
            con_drain_cpu = __builtin_ctzll(hyp_part[i].cpu_mask);
            con_rx_enable((uint64_t)con_drain_cpu);
            hyp_printf("rtmux: console input goes to %s; escape (0x%02x) then 1..%u switches partitions\n",
                       con_focus->name, config_console_escape, hyp_nparts);
            break;
        }
    }
    cpu_init(cpu);
    for (unsigned c = 1; c < HYP_MAX_CPUS; c++) {
        bool used = false;
        for (unsigned i = 0; i < hyp_nparts; i++) {
            used = used || (hyp_part[i].cpu_mask & (1ull << c)) != 0;
        }
        if (!used) {
            continue;
        }
        /* QEMU virt numbers CPUs by Aff0; a board with clusters would take MPIDRs from its config. */
        int64_t rc = psci_fw_cpu_on(c, (uint64_t)(uintptr_t)arch_secondary_start, c);
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
