/*
 * GIC distributor as the partitions see it. The distributor is shared hardware, so every partition's
 * accesses trap (it is never mapped at stage 2) and are filtered here: a partition reads and changes
 * only the interrupts its configuration gives it; everything else reads as zero and ignores writes.
 * Routing (IROUTER) of an owned SPI is forced to a CPU of the owning partition, so no partition can
 * steer an interrupt onto another's core.
 */
#include "arch/cpu.h"
#include "board.h"
#include "hyp/hyp.h"

#define GICD_CTLR        0x0000u
#define GICD_TYPER       0x0004u
#define GICD_IIDR        0x0008u
#define GICD_TYPER2      0x000cu
#define GICD_IGROUPR     0x0080u
#define GICD_ISENABLER   0x0100u
#define GICD_ICENABLER   0x0180u
#define GICD_ISPENDR     0x0200u
#define GICD_ICPENDR     0x0280u
#define GICD_ISACTIVER   0x0300u
#define GICD_ICACTIVER   0x0380u
#define GICD_IPRIORITYR  0x0400u
#define GICD_ICFGR       0x0c00u
#define GICD_IGRPMODR    0x0d00u
#define GICD_IROUTER     0x6000u
#define GICD_IROUTER_END 0x7fe0u
#define GICD_ID_START    0xffd0u
#define GICD_CTLR_RWP    (1u << 31)
#define GICD_TYPER_LPIS  (1u << 17)

static spinlock_t gicd_lock;

static volatile uint32_t *gicd32(uint64_t off)
{
    return (volatile uint32_t *)(BOARD_GICD_BASE + off);
}

bool part_owns_irq(const struct partition *p, unsigned intid)
{
    return intid >= 32 && intid < HYP_MAX_INTID && (p->irqs[intid / 32] >> (intid % 32)) & 1u;
}

void gic_dist_init(void)
{
    /* Affinity routing, Group 1 non-secure enabled; every SPI starts disabled and in Group 1. */
    uint32_t lines = ((*gicd32(GICD_TYPER) & 0x1fu) + 1u) * 32u;
    *gicd32(GICD_CTLR) = 0;
    while (*gicd32(GICD_CTLR) & GICD_CTLR_RWP) {
    }
    for (uint32_t i = 32; i < lines && i < HYP_MAX_INTID; i += 32) {
        *gicd32(GICD_ICENABLER + i / 8u) = 0xffffffffu;
        *gicd32(GICD_IGROUPR + i / 8u) = 0xffffffffu;
    }
    *gicd32(GICD_CTLR) = (1u << 4) | (1u << 1); /* ARE_NS | EnableGrp1NS */
    while (*gicd32(GICD_CTLR) & GICD_CTLR_RWP) {
    }
}

/* Bit mask of the owned interrupts among intid first..first+31. */
static uint32_t owned_word(const struct partition *p, unsigned first)
{
    return first >= 32 && first < HYP_MAX_INTID ? p->irqs[first / 32] : 0;
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

bool vgicd_access(struct vcpu *v, uint64_t off, bool write, uint64_t *val, unsigned size)
{
    const struct partition *p = v->part;
    if (off < 0x10u || off >= GICD_ID_START) {
        /* CTLR/TYPER/IIDR/TYPER2 and ID registers: readable, never writable by a partition. */
        if (!write) {
            *val = size == 8 ? *(volatile uint64_t *)(BOARD_GICD_BASE + off) : *gicd32(off & ~3ull);
            if (off == GICD_TYPER) {
                *val &= ~GICD_TYPER_LPIS; /* no LPIs (no ITS) in a partition */
            }
        }
        return true;
    }
    spin_lock(&gicd_lock);
    if (off >= GICD_IGROUPR && off < GICD_IPRIORITYR) {
        /* One bit per interrupt; 32-bit accesses only. */
        uint64_t base = off & ~0x7full;
        unsigned first = (unsigned)((off - base) * 8u);
        uint32_t mask = owned_word(p, first);
        if (!write) {
            *val = *gicd32(off) & mask;
        } else if (base == GICD_IGROUPR) {
            *gicd32(off) |= mask; /* owned interrupts stay Group 1 non-secure */
        } else {
            *gicd32(off) = (uint32_t)*val & mask; /* set/clear registers: zero bits do nothing */
        }
    } else if (off >= GICD_IPRIORITYR && off < GICD_IPRIORITYR + 0x400u) {
        unsigned first = (unsigned)(off - GICD_IPRIORITYR);
        for (unsigned i = 0; i < size; i++) {
            volatile uint8_t *b = (volatile uint8_t *)(BOARD_GICD_BASE + off + i);
            bool own = part_owns_irq(p, first + i);
            if (write && own) {
                *b = (uint8_t)(*val >> (8u * i));
            } else if (!write) {
                *val = (i == 0 ? 0 : *val) | ((uint64_t)(own ? *b : 0u) << (8u * i));
            }
        }
    } else if (off >= GICD_ICFGR && off < GICD_ICFGR + 0x100u) {
        unsigned first = (unsigned)((off - GICD_ICFGR) * 4u);
        uint32_t mask = 0;
        for (unsigned i = 0; i < 16; i++) {
            mask |= part_owns_irq(p, first + i) ? 3u << (2u * i) : 0u;
        }
        if (write) {
            *gicd32(off) = (*gicd32(off) & ~mask) | ((uint32_t)*val & mask);
        } else {
            *val = *gicd32(off) & mask;
        }
    } else if (off >= GICD_IGRPMODR && off < GICD_IGRPMODR + 0x80u) {
        if (!write) {
            *val = 0; /* owned interrupts are Group 1 non-secure; the modifier stays 0 */
        }
    } else if (off >= GICD_IROUTER && off < GICD_IROUTER_END) {
        unsigned intid = (unsigned)((off - GICD_IROUTER) / 8u);
        volatile uint64_t *r = (volatile uint64_t *)(BOARD_GICD_BASE + (off & ~7ull));
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

#define GICR_CTLR         0x0000u
#define GICR_TYPER        0x0008u
#define GICR_WAKER        0x0014u
#define GICR_PIDR2        0xffe8u
#define GICR_SGI          0x10000u
#define GICR_TYPER_LAST   (1ull << 4)
#define GICR_WAKER_PS     (1u << 1)
#define GICR_WAKER_CA     (1u << 2)
#define HYP_RESERVED_PPIS ((1u << 25) | (1u << 26)) /* vGIC maintenance, EL2 timer: never the guest's */

bool vgicr_access(struct vcpu *v, uint64_t ipa, bool write, uint64_t *val, unsigned size)
{
    uint64_t frame = (ipa - BOARD_GICR_BASE) / BOARD_GICR_STRIDE;
    uint64_t off = (ipa - BOARD_GICR_BASE) % BOARD_GICR_STRIDE;
    uint64_t base = BOARD_GICR_BASE + frame * BOARD_GICR_STRIDE;
    volatile uint32_t *r32 = (volatile uint32_t *)(base + (off & ~3ull));
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
            if (frame + 1 >= BOARD_MAX_CPUS || ((v->part->cpu_mask >> (frame + 1)) & 1u) == 0) {
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
    if (off < GICR_SGI) {
        if (off == GICR_WAKER) {
            /* The guest sleeps and wakes a virtual view; the physical redistributor stays awake. */
            if (write) {
                v->gicr_waker = (uint32_t)*val & GICR_WAKER_PS;
            } else {
                *val = v->gicr_waker | ((v->gicr_waker & GICR_WAKER_PS) ? GICR_WAKER_CA : 0u);
            }
        } else if (!write && (off == GICR_CTLR || off >= 0xffd0u)) {
            *val = *r32;
        }
        return true; /* LPI tables and the rest: RAZ/WI */
    }
    uint64_t soff = off - GICR_SGI;
    if (soff >= 0x100u && soff < 0x400u && (soff & 0x7fu) == 0) {
        /* ISENABLER0 .. ICACTIVER0: one bit per SGI/PPI. */
        if (write) {
            *r32 = (uint32_t)*val & ~HYP_RESERVED_PPIS;
        } else {
            *val = *r32 & ~HYP_RESERVED_PPIS;
        }
    } else if (soff >= 0x400u && soff < 0x420u) {
        for (unsigned i = 0; i < size; i++) {
            unsigned intid = (unsigned)(soff - 0x400u) + i;
            volatile uint8_t *b = (volatile uint8_t *)(base + off + i);
            if (write && !((HYP_RESERVED_PPIS >> intid) & 1u)) { /* intid < 32 here */
                *b = (uint8_t)(*val >> (8u * i));
            } else if (!write) {
                *val |= (uint64_t)*b << (8u * i);
            }
        }
    } else if (soff == 0xc04u) {
        /* ICFGR1 (PPIs); ICFGR0 (SGIs) is read-only. */
        uint32_t keep = (3u << (2u * (25u - 16u))) | (3u << (2u * (26u - 16u)));
        if (write) {
            *r32 = (*r32 & keep) | ((uint32_t)*val & ~keep);
        } else {
            *val = *r32;
        }
    } else if (!write && (soff == 0x80u || soff == 0xc00u)) {
        *val = *r32; /* IGROUPR0 (all Group 1), ICFGR0 */
    }
    return true;
}
