/*
 * Partitions (core/partition.c). Static partitioning: every partition owns whole CPUs, a RAM range,
 * devices and interrupts, fixed at boot by the configuration blob.
 */
#ifndef HYP_PARTITION_H
#define HYP_PARTITION_H

#include <stdbool.h>
#include <stdint.h>

#include "hyp/limits.h"
#include "hyp/mmio.h"
#include "hyp/vcpu.h"
#include "hyp/vuart.h"

struct vbus_region;

enum part_kind { PART_RTOS = 1, PART_LINUX = 2 };
enum part_state { PART_OFF = 0, PART_RUNNING, PART_FAULTED };
enum part_fault_policy { FAULT_STOP = 0, FAULT_RESTART = 1 };

/* A passed-through range: guest IPA -> physical PA, mapped at stage 2 as device memory. */
struct mem_range {
    uint64_t ipa, pa, size;
};

struct part_image {
    const uint8_t *data; /* pristine copy in the hypervisor's payload */
    uint64_t size;       /* 0: absent */
    uint64_t ipa;        /* where it is loaded */
};

/* What a fault does (lifecycle.c): stop, or restart at most max_restarts times in any window_s seconds;
 * and the faults so far. */
struct part_fault {
    enum part_fault_policy policy;
    unsigned max_restarts; /* 1..HYP_MAX_RESTARTS with FAULT_RESTART */
    uint32_t window_s;
    uint64_t count; /* faults so far, whatever the policy did */
    /* Counter values of the last restarts: a ring of max_restarts entries, the oldest at restarts %
     * max_restarts once it is full. */
    uint64_t restart_stamp[HYP_MAX_RESTARTS];
    uint64_t restarts;
};

/* Shared-core mode. rtos: an rtos partition whose CPU also runs the Linux partition that lists it,
 * whenever the rtos is idle (core/share.c); starved_ms: how long Linux may go without running there
 * before the console says so (non-zero exactly when rtos is set). mask: the CPUs the partition shares
 * with another (for that rtos: its CPU; for a Linux partition: the CPUs it shares with an rtos), set at
 * start-up from the above (part_share_init). */
struct part_share {
    bool rtos;
    uint32_t starved_ms;
    uint64_t mask;
};

/* A partition's console: its emulated UART, its console ring (lib/conring.h; NULL: none) at its PA in
 * the hypervisor's map, and the rate limit of the lines it causes. ring_on: the ring may be drained
 * (cleared before the RAM is wiped, set after a load); ring_tail: the consumer's index, kept here so that
 * the partition cannot move it. The rate limit (part_line_allowed): tokens used, when they were last
 * refilled, lines not shown since the last one that was. */
struct part_console {
    struct vuart uart;
    struct conring *ring;
    uint32_t ring_size;
    volatile bool ring_on;
    uint32_t ring_tail, dropped, dropped_lines;
    unsigned lines_used;
    uint64_t lines_stamp, lines_suppressed;
};

/* The V-Bus region in an rtos partition's RAM (lib/vbus.h; NULL: it serves no channel), at its PA in the
 * hypervisor's map, and where the partition sees it (the DTB's /rtmux-vbus reg). */
struct part_vbus {
    struct vbus_region *region;
    uint64_t ipa;
    uint32_t size;
};

/* A partition: what it is and owns (kind, CPUs, RAM, devices, images), and the parts it has, each
 * one struct: its interrupts (vgic), fault policy, sharing, console, V-Bus region. */
struct partition {
    const char *name;
    const char *tag;
    enum part_kind kind;
    uint64_t cpu_mask;
    uint64_t ram_ipa, ram_pa, ram_size;
    struct mem_range dev[HYP_MAX_DEVICES];
    unsigned ndev;
    struct vgic_dist vgic; /* its interrupts: owned SPIs, emulated ones (arch/vcpu_state.h) */
    struct part_image kernel, initrd, dtb;
    uint64_t entry_ipa; /* PC at entry (EL1h, MMU off, x0 = dtb.ipa) */
    struct {
        uint32_t off, size; /* random bytes in the DTB image (Linux's seeds), changed at every start */
    } seed[HYP_MAX_SEEDS];
    bool seeds_fixed; /* BLOB_FLAG_FIXED_SEEDS (measurement only): seed bytes kept as the tools wrote them */
    struct {
        uint32_t first, count; /* IOMMU stream IDs whose DMA reaches this RAM only (count 0: none) */
    } stream[HYP_MAX_STREAMS];
    struct part_fault fault;
    struct part_share share;
    /* runtime */
    uint64_t starts; /* partition starts so far: boot, then one per reset */
    uint64_t *s2_root;
    uint64_t vttbr;
    volatile int state; /* enum part_state; read by other CPUs */
    /* One of its CPUs is stopping or restarting the partition (lifecycle.c; under its CPU lock): no
     * CPU_ON is accepted, and its other CPUs are being turned off. */
    volatile bool going_down;
    struct part_console con;
    struct mmio_region mmio[HYP_MAX_MMIO];
    unsigned nmmio;
    /* What the hypervisor refused or emulated for the partition (reported, and read by tests). */
    struct {
        uint64_t aborts;  /* stage-2 faults refused: abort injected */
        uint64_t setway;  /* set/way cache maintenance ignored */
        uint64_t sysregs; /* PMU, debug, auxiliary control accesses emulated (RAZ/WI) */
        uint64_t undefs;  /* other trapped system registers: undefined instruction injected */
        /* Level interrupts injected while the guest could not take them, re-checked at its next
         * Group 1 CPU-interface access (vgic.c), and those withdrawn there because the line dropped. */
        uint64_t resamples, withdrawn;
    } stats;
    struct part_vbus vbus;
};

extern struct partition hyp_part[HYP_MAX_PARTITIONS];
extern unsigned hyp_nparts;

/* Builds p's stage-2 table, resets its UART and loads its images; p is then RUNNING. */
void part_setup(struct partition *p);
/* Wipes p's RAM and copies its pristine images in again (a reset must not leak the old run's state).
 * between(ctx), if not NULL, runs after every piece of LOAD_CHUNK bytes (a reload on a CPU shared with
 * the rtos lets the rtos run there: lifecycle.c). */
void part_load(struct partition *p, void (*between)(void *ctx), void *ctx);
bool part_any_running(void);
/* The partition owning CPU `cpu` (on a CPU an rtos shares with Linux: the Linux partition), or NULL. */
struct partition *part_of_cpu(unsigned cpu);
/* The rtos partition that shares CPU `cpu` with Linux, or NULL; sets every partition's share.mask (once,
 * at start-up: part_share_init). */
struct partition *part_rtos_sharing(unsigned cpu);
void part_share_init(void);

/*
 * The console lines a partition can cause (its refused accesses, its resets, what its devices report,
 * its dropped output) go through one rate limit per partition: a burst of PART_LINES_BURST, then one per
 * second, so that no partition can flood the console that all share. The count of the lines not shown
 * comes with the next line that is (and with the partition's stop report).
 */
#define PART_LINES_BURST 16u
/* Whether a line p causes may be printed now; *suppressed: how many were not since the last that was. */
bool part_line_allowed(struct partition *p, uint64_t *suppressed);
/* A line p causes, through its rate limit; a line saying how many were not shown comes first. */
void part_printf(struct partition *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* At p's stop: how many of its lines the rate limit kept back since the last one shown, if any. */
void part_lines_report(struct partition *p);

/* p's virtual CPU on CPU `cpu` (hyp/vcpu.h). */
static inline struct vcpu *part_vcpu(const struct partition *p, unsigned cpu)
{
    return p->kind == PART_RTOS && p->share.rtos ? &hyp_rtos_vcpu[cpu] : &hyp_vcpu[cpu];
}

/* Whether the emulated interrupt intid may be injected now: an SPI p enabled, or not an SPI at all
 * (private interrupts of a level source are the vCPU's own and always deliverable). */
static inline bool part_virq_enabled(const struct partition *p, unsigned intid)
{
    return intid < 32u ||
           (intid < HYP_MAX_INTID && ((p->vgic.virq_enabled[intid / 32u] >> (intid % 32u)) & 1u) != 0);
}

/* p's level source (emulated SPI) intid, or NULL. */
static inline struct vgic_level *part_level(struct partition *p, unsigned intid)
{
    for (unsigned i = 0; i < VGIC_MAX_LEVELS; i++) {
        if (p->vgic.level[i].intid == intid && intid != 0) {
            return &p->vgic.level[i];
        }
    }
    return NULL;
}

static inline bool part_owns_irq(const struct partition *p, unsigned intid)
{
    return intid >= 32u && intid < HYP_MAX_INTID && ((p->vgic.irqs[intid / 32u] >> (intid % 32u)) & 1u) != 0;
}

/* p's boot CPU: its first. It starts with the partition; the others start with PSCI CPU_ON. */
static inline unsigned part_boot_cpu(const struct partition *p)
{
    return p->cpu_mask != 0 ? (unsigned)__builtin_ctzll(p->cpu_mask) : 0u;
}

/* The affinity (MPIDR) of p's boot CPU, where its SPIs are routed at each start; 0 for a partition
 * without CPUs. */
static inline uint64_t part_first_affinity(const struct partition *p)
{
    return p->cpu_mask != 0 ? hyp_vcpu[part_boot_cpu(p)].mpidr : 0;
}

/* The CPU of p whose affinity (packed Aff3:Aff2:Aff1:Aff0, as struct vcpu's mpidr) is aff, or -1: the
 * partition knows no other CPU. */
static inline int part_cpu_of_affinity(const struct partition *p, uint64_t aff)
{
    for (unsigned c = 0; c < HYP_MAX_CPUS; c++) {
        if (((p->cpu_mask >> c) & 1u) != 0 && hyp_vcpu[c].mpidr == aff) {
            return (int)c;
        }
    }
    return -1;
}

static inline unsigned part_index(const struct partition *p)
{
    return (unsigned)(p - hyp_part);
}

#endif /* HYP_PARTITION_H */
