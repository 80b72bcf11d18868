/*
 * Hypervisor core types. Static partitioning: every partition owns whole CPUs, a RAM range, devices
 * and interrupts, fixed at boot.
 */
#ifndef HYP_HYP_H
#define HYP_HYP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/regs.h"

#define HYP_MAX_CPUS       8u
#define HYP_MAX_PARTITIONS 4u
#define HYP_MAX_DEVICES    8u
#define HYP_MAX_INTID      1020u

enum part_kind { PART_RTOS = 1, PART_LINUX = 2 };
enum part_state { PART_OFF = 0, PART_RUNNING, PART_FAULTED };

struct mmio_range {
    uint64_t ipa, pa, size;
};

/* Emulated PL011 (core/vuart.c). */
struct vuart {
    uint32_t cr, imsc, ris, lcrh, ibrd, fbrd, ifls, dmacr;
    uint8_t rx[4096]; /* input typed or pasted faster than the guest reads: never dropped below 4 KiB */
    unsigned rx_head, rx_count;
    /* Output: the partition's CPU only appends to tx (single producer, no lock, never waits); the
     * console CPU drains it into line[] and writes whole tagged lines (core/console.c). */
    char tx[4096];
    volatile uint32_t tx_prod, tx_cons;
    volatile uint32_t tx_dropped; /* characters lost to a full tx ring */
    uint32_t dropped_reported;
    char line[160];
    unsigned line_len;
    unsigned quiet_ticks; /* console ticks since the last character: a prompt is shown after one */
};

#define HYP_MAX_SEEDS 2

struct partition {
    const char *name;
    const char *tag;
    enum part_kind kind;
    uint64_t cpu_mask;
    uint64_t ram_ipa, ram_pa, ram_size;
    struct mmio_range dev[HYP_MAX_DEVICES];
    unsigned ndev;
    uint32_t irqs[HYP_MAX_INTID / 32 + 1]; /* bitmap of interrupt IDs >= 32 the partition owns */
    const uint8_t *kernel;                 /* pristine images in the hypervisor's payload */
    uint64_t kernel_size, kernel_ipa;
    const uint8_t *initrd;
    uint64_t initrd_size, initrd_ipa;
    const uint8_t *dtb;
    uint64_t dtb_size, dtb_ipa;
    uint64_t entry_ipa; /* PC at entry (EL1h, MMU off, x0 = dtb_ipa) */
    struct {
        uint32_t off, size; /* random bytes in the DTB image (Linux's seeds), changed at every start */
    } seed[HYP_MAX_SEEDS];
    uint64_t starts; /* partition starts so far: boot, then one per reset */
    /* runtime */
    uint64_t *s2_root;
    uint64_t vttbr;
    volatile int state;
    struct vuart uart;
    unsigned fault_reports; /* rate limit for logged faults */
};

/* One physical CPU's hypervisor state; TPIDR_EL2 points here. guest first: vectors.S saves into it. */
struct vcpu {
    struct guest_regs guest;
    struct partition *part;
    unsigned cpu;
    uint64_t mpidr;
    /* virtual GIC state of a trapping (Linux) CPU */
    unsigned nlr;                                /* list registers implemented */
    uint32_t sw_pending[HYP_MAX_INTID / 32 + 1]; /* virtual interrupts waiting for a free list register */
    uint32_t gicr_waker;                         /* the guest's view of GICR_WAKER */
};

extern struct vcpu hyp_vcpu[HYP_MAX_CPUS];
extern struct partition hyp_part[HYP_MAX_PARTITIONS];
extern unsigned hyp_nparts;

/* core/main.c */
void hyp_main(unsigned cpu, uint64_t dtb) __attribute__((noreturn));
void hyp_secondary(unsigned cpu) __attribute__((noreturn));

/* core/partition.c */
void part_setup(struct partition *p);
void part_enter(struct vcpu *v) __attribute__((noreturn));
void part_stop(struct vcpu *v, const char *why) __attribute__((noreturn));
/* Restarts the partition on this CPU from its pristine images (PSCI SYSTEM_RESET). */
void part_reset(struct vcpu *v) __attribute__((noreturn));
bool part_owns_irq(const struct partition *p, unsigned intid);

/* core/console.c: the physical UART, shared by all CPUs */
void con_init(void);
void con_putc(char c);
void con_write(const char *s, size_t n);
/* A partition's output: tagged at the start of each console line; complete = ends with a newline. An
 * incomplete line (a shell prompt) stays open until the same partition continues it or another writes. */
void con_partition_out(const struct partition *p, const char *s, size_t n, bool complete);
int hyp_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int hyp_snprintf(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void hyp_panic(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* core/vuart.c */
void vuart_reset(struct partition *p);
bool vuart_access(struct vcpu *v, uint64_t off, bool write, uint64_t *val, unsigned size);

/* core/vgicd.c */
bool vgicd_access(struct vcpu *v, uint64_t off, bool write, uint64_t *val, unsigned size);
bool vgicr_access(struct vcpu *v, uint64_t ipa, bool write, uint64_t *val, unsigned size);
/* Physical GIC set-up done once by the boot CPU, and the interrupt path of trapping CPUs. */
void gic_dist_init(void);
/* core/vgic.c: the virtual CPU interface of partitions that take interrupts through EL2 (Linux). */
void vgic_cpu_init(struct vcpu *v);
void vgic_handle_irq(struct vcpu *v);
void vgic_inject(struct vcpu *v, unsigned vintid, unsigned pintid, bool eoi_notify);
bool vgic_sysreg_trap(struct vcpu *v, uint64_t esr);
/* Re-evaluates the emulated UART's interrupt line and injects it if it is asserted. */
void vgic_update_uart(struct vcpu *v);
bool vuart_irq_line(const struct partition *p);
void vuart_rx(struct partition *p, char c);
/* core/console.c: partition output. con_drain_cpu is the CPU that moves partitions' output to the
 * physical UART (a Linux CPU, whose interrupts trap to EL2), or -1 when there is none. */
extern int con_drain_cpu;
void con_drain(bool flush_partial);
/* Starts the periodic console tick (EL2 timer) on the drain CPU. */
void vgic_console_tick_start(void);
/* core/console.c: input from the physical UART (interrupt on the console CPU). */
void con_rx_irq(void);
/* Routes physical UART input to the CPU with that affinity (one that traps interrupts to EL2). */
void con_rx_enable(uint64_t cpu_affinity);
extern struct partition *con_focus;

/* arch: stage 2 (arch/arm64/mmu.c) */
void mmu_el2_init(void);
uint64_t *s2_new_root(void);
void s2_map(uint64_t *root, uint64_t ipa, uint64_t pa, uint64_t size, bool device);

/* arch: PSCI (arch/arm64/psci.c) */
int64_t psci_fw_cpu_on(uint64_t mpidr, uint64_t entry, uint64_t ctx);
void psci_fw_system_off(void) __attribute__((noreturn));
void psci_guest_call(struct vcpu *v);

/* arch: guest entry (arch/arm64/vectors.S) */
void arch_guest_enter(struct guest_regs *regs) __attribute__((noreturn));
void arch_secondary_start(void);

/* arch: spinlock */
typedef struct {
    volatile uint32_t v;
} spinlock_t;
void spin_lock(spinlock_t *l);
void spin_unlock(spinlock_t *l);

#endif /* HYP_HYP_H */
