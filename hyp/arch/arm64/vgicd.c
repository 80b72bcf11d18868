/*
 * GIC distributor and redistributors as the partitions see them. They are shared hardware, so every
 * partition's accesses trap (they are never mapped at stage 2) and are filtered here: a partition reads
 * and changes only the interrupts its configuration gives it; everything else reads as zero and ignores
 * writes. Routing (IROUTER) of an owned SPI is forced to a CPU of the owning partition, so no partition
 * can steer an interrupt onto another's core.
 */
#include "arch/vgicd.h"

#include "arch/spinlock.h"
#include "arm64/gicv3.h"
#include "board.h"
#include "hyp/partition.h"
#include "hyp/vcpu.h"

/* The hypervisor's own PPIs (vGIC maintenance, EL2 timer): never the guest's to configure. */
#define HYP_RESERVED_PPIS ((1u << BOARD_INTID_GIC_MAINT) | (1u << BOARD_INTID_HYP_TIMER))
/* Two configuration bits per interrupt in ICFGR. */
#define ICFGR_FIELD(intid) (3u << (2u * ((intid) % 16u)))

struct vgicd_hw vgicd_board = {.gicd = BOARD_GICD_BASE, .gicr = BOARD_GICR_BASE};

/* Serialises read-modify-write of shared distributor registers between partitions' CPUs. */
static spinlock_t gicd_lock;

static volatile uint32_t *reg32(uintptr_t base, uint64_t off)
{
    return (volatile uint32_t *)(base + off);
}

/* Bit mask of the owned interrupts among intid first..first+31. */
static uint32_t owned_word(const struct partition *p, unsigned first)
{
    return first >= GIC_SPI_BASE && first < HYP_MAX_INTID ? p->irqs[first / 32] : 0;
}

static uint64_t first_cpu_affinity(const struct partition *p)
{
    for (unsigned c = 0; c < HYP_MAX_CPUS; c++) {
        if (p->cpu_mask & (1ull << c)) {
            return hyp_vcpu[c].mpidr;
        }
    }
    return 0;
}

bool vgicd_mmio(struct vcpu *v, void *ctx, uint64_t off, bool write, uint64_t *val, unsigned size)
{
    const struct vgicd_hw *hw = ctx;
    const struct partition *p = v->part;
    if (off < GICD_TYPER2 + 4u || off >= GICD_ID_START) {
        /* CTLR/TYPER/IIDR/TYPER2 and ID registers: readable, never writable by a partition. */
        if (!write) {
            *val = size == 8 ? *(volatile uint64_t *)(hw->gicd + off) : *reg32(hw->gicd, off & ~3ull);
            if (off == GICD_TYPER) {
                *val &= ~(uint64_t)GICD_TYPER_LPIS; /* no LPIs (no ITS) in a partition */
            }
        }
        return true;
    }
    spin_lock(&gicd_lock);
    if (off >= GICD_IGROUPR && off < GICD_IPRIORITYR) {
        /* One bit per interrupt; 32-bit accesses only. */
        uint64_t base = off & ~(uint64_t)(GICD_BITREG_SPAN - 1u);
        unsigned first = (unsigned)((off - base) * 8u);
        uint32_t mask = owned_word(p, first);
        if (!write) {
            *val = *reg32(hw->gicd, off) & mask;
        } else if (base == GICD_IGROUPR) {
            *reg32(hw->gicd, off) |= mask; /* owned interrupts stay Group 1 non-secure */
        } else {
            *reg32(hw->gicd, off) = (uint32_t)*val & mask; /* set/clear registers: zero bits do nothing */
        }
    } else if (off >= GICD_IPRIORITYR && off < GICD_IPRIORITYR + GICD_IPRIORITYR_SPAN) {
        unsigned first = (unsigned)(off - GICD_IPRIORITYR);
        for (unsigned i = 0; i < size; i++) {
            volatile uint8_t *b = (volatile uint8_t *)(hw->gicd + off + i);
            bool own = part_owns_irq(p, first + i);
            if (write && own) {
                *b = (uint8_t)(*val >> (8u * i));
            } else if (!write) {
                *val = (i == 0 ? 0 : *val) | ((uint64_t)(own ? *b : 0u) << (8u * i));
            }
        }
    } else if (off >= GICD_ICFGR && off < GICD_ICFGR + GICD_ICFGR_SPAN) {
        unsigned first = (unsigned)((off - GICD_ICFGR) * 4u);
        uint32_t mask = 0;
        for (unsigned i = 0; i < 16; i++) {
            mask |= part_owns_irq(p, first + i) ? ICFGR_FIELD(i) : 0u;
        }
        if (write) {
            *reg32(hw->gicd, off) = (*reg32(hw->gicd, off) & ~mask) | ((uint32_t)*val & mask);
        } else {
            *val = *reg32(hw->gicd, off) & mask;
        }
    } else if (off >= GICD_IGRPMODR && off < GICD_IGRPMODR + GICD_IGRPMODR_SPAN) {
        if (!write) {
            *val = 0; /* owned interrupts are Group 1 non-secure; the modifier stays 0 */
        }
    } else if (off >= GICD_IROUTER && off < GICD_IROUTER_END) {
        unsigned intid = (unsigned)((off - GICD_IROUTER) / 8u);
        volatile uint64_t *r = (volatile uint64_t *)(hw->gicd + (off & ~7ull));
        if (!part_owns_irq(p, intid)) {
            if (!write) {
                *val = 0;
            }
        } else if (write) {
            *r = first_cpu_affinity(p);
        } else {
            *val = *r;
        }
    } else if (!write) {
        *val = 0;
    }
    spin_unlock(&gicd_lock);
    return true;
}

bool vgicr_mmio(struct vcpu *v, void *ctx, uint64_t off_in_region, bool write, uint64_t *val, unsigned size)
{
    const struct vgicd_hw *hw = ctx;
    uint64_t frame = off_in_region / BOARD_GICR_STRIDE;
    uint64_t off = off_in_region % BOARD_GICR_STRIDE;
    uintptr_t base = hw->gicr + frame * BOARD_GICR_STRIDE;
    volatile uint32_t *r32 = reg32(base, off & ~3ull);
    bool own = (v->part->cpu_mask >> frame) & 1u;
    if (!write) {
        *val = 0;
    }
    /* Any CPU's frame: identification, so the guest can scan for its own (TYPER affinity, Last). */
    if (off == GICR_TYPER || off == GICR_TYPER + 4 || off == GICR_PIDR2) {
        if (!write) {
            /* The partition's DTB gives one redistributor region per run of consecutive CPUs, so a
             * frame is the last of its region when the next CPU is not the partition's: without Last
             * there the guest walks past the region it mapped (physical Last is set only on the last
             * CPU of the board). */
            uint64_t typer = *(volatile uint64_t *)(base + GICR_TYPER) & ~GICR_TYPER_LAST;
            if (frame + 1 >= HYP_MAX_CPUS || ((v->part->cpu_mask >> (frame + 1)) & 1u) == 0) {
                typer |= GICR_TYPER_LAST;
            }
            *val = off == GICR_PIDR2   ? *r32
                   : size == 8         ? typer
                   : off == GICR_TYPER ? typer & 0xffffffffu
                                       : typer >> 32;
        }
        return true;
    }
    if (!own) {
        return true; /* another partition's redistributor: reads as zero, writes ignored */
    }
    if (off < GICR_SGI_OFFSET) {
        if (off == GICR_WAKER) {
            /* The guest sleeps and wakes a virtual view; the physical redistributor stays awake. */
            if (write) {
                v->vgic.gicr_waker = (uint32_t)*val & GICR_WAKER_PS;
            } else {
                *val = v->vgic.gicr_waker | ((v->vgic.gicr_waker & GICR_WAKER_PS) ? GICR_WAKER_CA : 0u);
            }
        } else if (!write && (off == GICR_CTLR || off >= GICR_ID_START)) {
            *val = *r32;
        }
        return true; /* LPI tables and the rest: RAZ/WI */
    }
    uint64_t soff = off - GICR_SGI_OFFSET;
    if (soff >= GICR_ISENABLER0 && soff < GICR_IPRIORITYR0 && (soff & (GICD_BITREG_SPAN - 1u)) == 0) {
        /* ISENABLER0 .. ICACTIVER0: one bit per SGI/PPI. */
        if (write) {
            *r32 = (uint32_t)*val & ~HYP_RESERVED_PPIS;
        } else {
            *val = *r32 & ~HYP_RESERVED_PPIS;
        }
    } else if (soff >= GICR_IPRIORITYR0 && soff < GICR_IPRIORITYR0 + GIC_SPI_BASE) {
        for (unsigned i = 0; i < size; i++) {
            unsigned intid = (unsigned)(soff - GICR_IPRIORITYR0) + i;
            volatile uint8_t *b = (volatile uint8_t *)(base + off + i);
            if (write && !((HYP_RESERVED_PPIS >> intid) & 1u)) { /* intid < 32 here */
                *b = (uint8_t)(*val >> (8u * i));
            } else if (!write) {
                *val |= (uint64_t)*b << (8u * i);
            }
        }
    } else if (soff == GICR_ICFGR1) {
        /* PPIs; ICFGR0 (SGIs) is read-only. */
        uint32_t keep = ICFGR_FIELD(BOARD_INTID_GIC_MAINT) | ICFGR_FIELD(BOARD_INTID_HYP_TIMER);
        if (write) {
            *r32 = (*r32 & keep) | ((uint32_t)*val & ~keep);
        } else {
            *val = *r32;
        }
    } else if (!write && (soff == GICR_IGROUPR0 || soff == GICR_ICFGR0)) {
        *val = *r32; /* IGROUPR0 (all Group 1), ICFGR0 */
    }
    return true;
}
