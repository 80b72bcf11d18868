/*
 * The per-CPU hypervisor state (hyp/vcpu.h); start.S points each CPU's TPIDR_EL2 at its entry.
 */
#include "hyp/vcpu.h"

#include "hyp/share.h"

#include "hyp/mmio.h"
#include "hyp/partition.h"
#include "hyp/printf.h"

struct vcpu hyp_vcpu[HYP_MAX_CPUS];
struct vcpu hyp_rtos_vcpu[HYP_MAX_CPUS];
uint8_t hyp_stacks[HYP_MAX_CPUS][HYP_STACK_SIZE] __attribute__((aligned(16)));

/* Field names of the report line, in enum hyp_entry order (tools/rtmux/formats/hyp_console.py). */
static const char *const entry_names[HYP_ENTRY_KINDS] = {
    [ENTRY_DABT] = "dabt",      [ENTRY_IABT] = "iabt",   [ENTRY_HVC] = "hvc", [ENTRY_SMC] = "smc",
    [ENTRY_SYSREG] = "sysreg",  [ENTRY_OTHER] = "other", [ENTRY_IRQ] = "irq", [ENTRY_SERROR] = "serror",
    [ENTRY_EL2_IRQ] = "el2irq", [ENTRY_WFI] = "wfi",
};

static void report_one(const struct vcpu *v)
{
    uint64_t n[HYP_ENTRY_KINDS], total = 0;
    for (unsigned k = 0; k < HYP_ENTRY_KINDS; k++) {
        n[k] = __atomic_load_n(&v->entries[k], __ATOMIC_RELAXED);
        total += n[k];
    }
    char line[256];
    int len = hyp_snprintf(line, sizeof(line), "rtmux: el2-entries cpu=%u partition=%s total=%lu", v->cpu,
                           v->part->name, (unsigned long)total);
    for (unsigned k = 0; k < HYP_ENTRY_KINDS && len > 0 && (size_t)len < sizeof(line); k++) {
        len += hyp_snprintf(line + len, sizeof(line) - (size_t)len, " %s=%lu", entry_names[k],
                            (unsigned long)n[k]);
    }
    hyp_printf("%s\n", line);
    if ((v->part->cpu_mask >> (v->cpu + 1u)) == 0) {
        mmio_report(v->part); /* once per partition, after its last CPU's line */
    }
}

void vcpu_report_entries(void)
{
    for (unsigned c = 0; c < HYP_MAX_CPUS; c++) {
        /* A shared CPU: the rtos's line first, as on a CPU of its own. */
        if (hyp_rtos_vcpu[c].part != NULL) {
            report_one(&hyp_rtos_vcpu[c]);
        }
        if (hyp_vcpu[c].part != NULL) {
            report_one(&hyp_vcpu[c]);
        }
    }
    share_report(); /* the shared CPUs' books, with their entries */
}
