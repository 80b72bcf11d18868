/*
 * GIC distributor and redistributors as the partitions see them. They are shared hardware, so every
 * partition's accesses trap (they are never mapped at stage 2) and are filtered here: a partition reads
 * and changes only the interrupts its configuration gives it; everything else reads as zero and ignores
 * writes. Routing (IROUTER) of an owned SPI goes to the CPU of the owning partition the guest names, or
 * to its boot CPU when it names none of them (vgic_route.c), so no partition can steer an interrupt
 * onto another's core.
 *
 * What has no physical register behind it is emulated: the emulated SPIs' enable, priority and route
 * (the partition's level sources), each CPU's GICR_WAKER, and the pending and active state of SGIs in a
 * CPU's own frame (they are virtual and live in its list registers, vgic.c); that frame's PPIs read
 * as pending or active as the guest sees them (listed and not taken yet: pending, not active).
 *
 * Access policy. The filter emulates only the accesses the GICv3 architecture defines: naturally
 * aligned; 32-bit to any register; 64-bit to the 64-bit registers (GICD_IROUTER<n>, GICR_TYPER, of
 * which either 32-bit half may also be accessed alone); 8-bit to the priority registers
 * (GICD_IPRIORITYR<n>, GICR_IPRIORITYR<n>). Anything else (an unaligned access, a 16-bit one, 64 bits
 * or a byte elsewhere, or any access to the redistributor frame of a CPU the board does not have) reads
 * as zero and ignores writes, without a log line. Hence the invariants the rest of the file relies on:
 *  - the hypervisor's own device accesses are naturally aligned, lie inside the one register the guest
 *    addressed and inside a frame that exists (an unaligned device access is an alignment fault at EL2,
 *    an access to unassigned space an external abort: either would stop the machine);
 *  - the ownership masks (one bit, one byte or two bits per interrupt) are computed for whole registers,
 *    so a partition cannot shift a mask onto a neighbour's interrupts;
 *  - a read of n bytes returns at most 8n bits, and a write stores only what its n bytes carried.
 * RAZ/WI rather than an abort: the architecture leaves these accesses unpredictable, RAZ/WI is what it
 * gives reserved registers, and it costs a probing guest nothing to log.
 */
#include "arch/vgicd.h"

#include "arch/spinlock.h"
#include "arch/vgic.h"
#include "arch/vgic_route.h"
#include "arm64/gicv2.h"
#include "arm64/gicv3.h"
#include "board.h"
#include "drivers/gic.h"
#include "hyp/partition.h"
#include "hyp/vcpu.h"

/* Two configuration bits per interrupt in ICFGR. */
#define ICFGR_FIELD(intid) (3u << (2u * ((intid) % 16u)))

_Static_assert(BOARD_INTID_GIC_MAINT < GIC_SPI_BASE && BOARD_INTID_HYP_TIMER < GIC_SPI_BASE,
               "the hypervisor's interrupts are PPIs: one bit each in a 32-bit mask");

struct vgicd_hw vgicd_board = {.gicd = BOARD_GICD_BASE, .gicr = BOARD_GICR_BASE};

/* Serialises read-modify-write of shared distributor registers between partitions' CPUs. */
static spinlock_t gicd_lock;

static volatile uint32_t *reg32(uintptr_t base, uint64_t off)
{
    return (volatile uint32_t *)(base + off);
}

static volatile uint64_t *reg64(uintptr_t base, uint64_t off)
{
    return (volatile uint64_t *)(base + off);
}

static volatile uint8_t *reg8(uintptr_t base, uint64_t off)
{
    return (volatile uint8_t *)(base + off);
}

static bool hyp_ppi(unsigned intid)
{
    return intid < GIC_SPI_BASE && ((VGIC_HYP_PPIS >> intid) & 1u) != 0;
}

static bool in(uint64_t off, uint64_t start, uint64_t span)
{
    return off >= start && off - start < span;
}

/* Bit mask of the owned interrupts among intid first..first+31. */
static uint32_t owned_word(const struct partition *p, unsigned first)
{
    return first >= GIC_SPI_BASE && first < HYP_MAX_INTID ? p->vgic.irqs[first / 32] : 0;
}

/* The architected accesses (header comment); off is within the 64 KiB distributor. */
static bool gicd_architected(uint64_t off, unsigned size)
{
    if (size != 1 && size != 4 && size != 8) {
        return false;
    }
    if (off % size != 0 || off >= GICD_SIZE) {
        return false;
    }
    return size == 4 || (size == 8 && in(off, GICD_IROUTER, GICD_IROUTER_END - GICD_IROUTER)) ||
           (size == 1 && in(off, GICD_IPRIORITYR, GICD_IPRIORITYR_SPAN));
}

/* Same for one redistributor frame pair (RD_base then SGI_base); off is within it. */
static bool gicr_architected(uint64_t off, unsigned size)
{
    if (size != 1 && size != 4 && size != 8) {
        return false;
    }
    if (off % size != 0 || off >= BOARD_GICR_STRIDE) {
        return false;
    }
    return size == 4 || (size == 8 && off == GICR_TYPER) ||
           (size == 1 && in(off, GICR_SGI_OFFSET + GICR_IPRIORITYR0, GIC_SPI_BASE));
}

/* The emulated SPIs of word w (no physical line: the distributor has nothing of theirs): Group 1 and
 * an enable bit of the partition's own (part_virq_enabled); pending and active are the level source's
 * and the list registers', and read as zero here. A read ORs its bits into *val (zero before). True
 * when a write enabled one that was disabled: its line may be high already, and a GIC makes a level
 * interrupt pending as soon as it is enabled with its line asserted (Linux's console flood relies on it:
 * test_console_flood_from_linux). */
static bool virq_access(struct partition *p, uint64_t base, unsigned w, bool write, uint32_t wval,
                        uint64_t *val)
{
    uint32_t mask = p->vgic.virqs[w];
    if (base == GICD_IGROUPR && !write) {
        *val |= gic_version() == 3 ? mask : 0u; /* the group the version's guests use */
    } else if (base == GICD_ISENABLER) {
        if (write) {
            uint32_t newly = wval & mask & ~p->vgic.virq_enabled[w];
            p->vgic.virq_enabled[w] |= newly;
            return newly != 0;
        } else {
            *val |= p->vgic.virq_enabled[w] & mask;
        }
    } else if (base == GICD_ICENABLER) {
        if (write) {
            p->vgic.virq_enabled[w] &= ~(wval & mask);
        } else {
            *val |= p->vgic.virq_enabled[w] & mask;
        }
    }
    return false;
}

/* Emulates an architected distributor access (gicd_architected) by p, under gicd_lock. True when it
 * enabled an emulated SPI (virq_access). */
static bool gicd_access(const struct vgicd_hw *hw, struct partition *p, uint64_t off, bool write,
                        uint64_t *val, unsigned size)
{
    bool enabled = false;
    uint32_t wval = (uint32_t)*val; /* the value of a 32-bit or byte write */
    if (off >= GICD_IGROUPR && off < GICD_IPRIORITYR) {
        /* One bit per interrupt (IGROUPR, ISENABLER .. ICACTIVER); 32-bit accesses only. */
        uint64_t base = off & ~(uint64_t)(GICD_BITREG_SPAN - 1u);
        unsigned first = (unsigned)(off - base) * 8u;
        uint32_t mask = owned_word(p, first);
        if (first >= GIC_SPI_BASE && first < HYP_MAX_INTID && p->vgic.virqs[first / 32u] != 0) {
            enabled = virq_access(p, base, first / 32u, write, wval, val);
        }
        if (!write) {
            *val |= *reg32(hw->gicd, off) & mask;
        } else if (base == GICD_IGROUPR && gic_version() == 3) {
            *reg32(hw->gicd, off) |= mask; /* owned interrupts stay Group 1 non-secure */
        } else if (base == GICD_IGROUPR) {
            *reg32(hw->gicd, off) &= ~mask; /* GICv2: owned interrupts stay Group 0 */
        } else {
            *reg32(hw->gicd, off) = wval & mask; /* set/clear registers: zero bits do nothing */
        }
    } else if (in(off, GICD_IPRIORITYR, GICD_IPRIORITYR_SPAN)) {
        /* One byte per interrupt, each accessed alone: a neighbour's byte is never read back and
         * rewritten, so no other writer of this word can lose an update. */
        unsigned first = (unsigned)(off - GICD_IPRIORITYR);
        for (unsigned i = 0; i < size; i++) {
            bool own = part_owns_irq(p, first + i);
            struct vgic_level *l = part_level(p, first + i); /* an emulated SPI: its byte is the source's */
            /* A partition sharing a CPU with the rtos: its SPIs stay below the rtos's priority mask, and
             * the priority it gave them is kept for its list registers (arch_part_irqs_init). */
            uint8_t *kept = own && p->share.mask != 0 ? &p->vgic.spi_prio[first + i] : NULL;
            if (!write) {
                *val |= kept != NULL ? (uint64_t)*kept << (8u * i)
                        : own        ? (uint64_t)*reg8(hw->gicd, off + i) << (8u * i)
                        : l != NULL  ? (uint64_t)l->prio << (8u * i)
                                     : 0u;
            } else if (kept != NULL) {
                *kept = (uint8_t)(wval >> (8u * i));
            } else if (own) {
                *reg8(hw->gicd, off + i) = (uint8_t)(wval >> (8u * i));
            } else if (l != NULL) {
                l->prio = (uint8_t)(wval >> (8u * i));
            }
        }
    } else if (in(off, GICD_ICFGR, GICD_ICFGR_SPAN)) {
        unsigned first = (unsigned)(off - GICD_ICFGR) * 4u;
        uint32_t mask = 0;
        for (unsigned i = 0; i < 16; i++) {
            mask |= part_owns_irq(p, first + i) ? ICFGR_FIELD(i) : 0u;
        }
        if (write) {
            *reg32(hw->gicd, off) = (*reg32(hw->gicd, off) & ~mask) | (wval & mask);
        } else {
            *val = *reg32(hw->gicd, off) & mask;
        }
    } else if (in(off, GICD_IROUTER, GICD_IROUTER_END - GICD_IROUTER)) {
        /* 64-bit register, or either 32-bit half; always accessed whole here. */
        uint64_t reg = off & ~7ull;
        unsigned intid = (unsigned)((reg - GICD_IROUTER) / 8u);
        struct vgic_level *l = part_level(p, intid);
        if (!part_owns_irq(p, intid) && l == NULL) {
            return false;
        }
        if (write) {
            /* A 32-bit write changes its half of the value the guest sees; the result names a CPU of
             * the partition (vgic_route.c), whatever was written. */
            uint64_t cur = l != NULL ? vgic_irouter_of(l->cpu) : *reg64(hw->gicd, reg);
            uint64_t next = size == 8    ? *val
                            : (off & 4u) ? (cur & 0xffffffffull) | ((uint64_t)wval << 32)
                                         : (cur & ~0xffffffffull) | wval;
            unsigned cpu = vgic_irouter_cpu(p, next);
            if (l != NULL) {
                l->cpu = (uint8_t)cpu;
            } else {
                *reg64(hw->gicd, reg) = vgic_irouter_of(cpu);
            }
        } else {
            uint64_t r = l != NULL ? vgic_irouter_of(l->cpu) : *reg64(hw->gicd, reg);
            *val = size == 8 ? r : (off & 4u) ? r >> 32 : (uint32_t)r;
        }
    }
    /* IGRPMODR (owned interrupts stay Group 1 non-secure, the modifier 0), ITARGETSR (unused with
     * affinity routing), NSACR, SGIR, the message-based SPI registers and reserved space: RAZ/WI. */
    return enabled;
}

bool vgicd_mmio(struct vcpu *v, void *ctx, uint64_t off, bool write, uint64_t *val, unsigned size)
{
    const struct vgicd_hw *hw = ctx;
    if (!write) {
        *val = 0;
    }
    if (!gicd_architected(off, size)) {
        return true;
    }
    if (off < GICD_TYPER2 + 4u || off >= GICD_ID_START) {
        /* CTLR/TYPER/IIDR/TYPER2 and ID registers (32-bit here): readable, never writable by a partition. */
        if (!write) {
            *val = *reg32(hw->gicd, off);
            if (off == GICD_TYPER) {
                *val &= ~(uint64_t)GICD_TYPER_LPIS; /* no LPIs (no ITS) in a partition */
            }
        }
        return true;
    }
    spin_lock(&gicd_lock);
    bool enabled = gicd_access(hw, v->part, off, write, val, size);
    spin_unlock(&gicd_lock);
    if (enabled) {
        /* A level source already high is pending at once, as on a real GIC, at the CPU it is routed to. */
        vgic_levels_changed(v->part, v);
    }
    return true;
}

/* Every SGI bit of a redistributor register. */
#define SGI_BITS ((1u << GIC_SGI_COUNT) - 1u)

/* GICR_ISPENDR0, ICPENDR0, ISACTIVER0, ICACTIVER0 (soff: offset in SGI_base) of frame t, one of v's
 * partition's CPUs. SGIs are virtual: in v's own frame they are the list registers' (vgic.c); in
 * another CPU's frame a set-pending sends them (as an SGI would), and everything else about them reads
 * as zero and is ignored (that CPU's list registers are its own system registers; Linux never looks).
 * PPIs are the physical ones, except that in v's own frame a PPI listed and not taken yet reads as
 * pending and not active (it is active at the physical GIC: acknowledged at EL2). The hypervisor's
 * private interrupts read as zero and never change. */
static void pend_active(struct vcpu *v, struct vcpu *t, uintptr_t sgi_base, uint64_t soff, bool write,
                        uint32_t wval, uint64_t *val, uint32_t hidden)
{
    bool self = t == v;
    bool set_pending = soff == GICR_ISPENDR0, pending_reg = soff == GICR_ISPENDR0 || soff == GICR_ICPENDR0;
    if (write) {
        uint32_t sgis = wval & SGI_BITS & ~VGIC_HYP_PPIS; /* virtual, whoever owns the physical ones */
        if (self) {
            vgic_sgi_write(v, soff, sgis);
        } else if (set_pending) {
            for (unsigned sgi = 0; sgi < GIC_SGI_COUNT; sgi++) {
                if ((sgis >> sgi) & 1u) {
                    vgic_post_sgi(t, sgi);
                }
            }
        }
        *reg32(sgi_base, soff) = wval & ~SGI_BITS & ~hidden;
        return;
    }
    uint32_t phys = *reg32(sgi_base, soff) & ~SGI_BITS;
    uint32_t listed_pend = 0, listed_act = 0;
    if (self) {
        vgic_private_state(v, &listed_pend, &listed_act);
    }
    uint32_t listed = listed_pend | listed_act;
    /* Physically active while listed (acknowledged at EL2): what the list register says counts. */
    uint32_t r = pending_reg ? phys | listed_pend : (phys & ~listed) | listed_act;
    *val = r & (SGI_BITS | ~hidden) & ~VGIC_HYP_PPIS;
}

static void private_access(struct vcpu *v, struct vcpu *t, uintptr_t sgi_base, uint64_t soff, bool write,
                           uint64_t *val, unsigned size);

bool vgicr_mmio(struct vcpu *v, void *ctx, uint64_t off_in_region, bool write, uint64_t *val, unsigned size)
{
    const struct vgicd_hw *hw = ctx;
    uint64_t frames = hw->ncpus < HYP_MAX_CPUS ? hw->ncpus : HYP_MAX_CPUS;
    uint64_t frame = off_in_region / BOARD_GICR_STRIDE;
    uint64_t off = off_in_region % BOARD_GICR_STRIDE;
    if (!write) {
        *val = 0;
    }
    /* A frame beyond the board's CPUs is unassigned space: never touched (it would abort at EL2). */
    if (frame >= frames || !gicr_architected(off, size)) {
        return true;
    }
    uintptr_t base = hw->gicr + frame * BOARD_GICR_STRIDE;
    uint32_t wval = (uint32_t)*val; /* the value of a 32-bit or byte write */
    bool own = (v->part->cpu_mask >> frame) & 1u;
    /* Any CPU's frame: identification, so the guest can scan for its own (TYPER affinity, Last). */
    if (off == GICR_TYPER || off == GICR_TYPER + 4u || off == GICR_PIDR2) {
        if (!write && off == GICR_PIDR2) {
            *val = *reg32(base, off);
        } else if (!write) {
            /* The partition's DTB gives one redistributor region per run of consecutive CPUs, so a
             * frame is the last of its region when the next CPU is not the partition's: without Last
             * there the guest walks past the region it mapped (physical Last is set only on the last
             * CPU of the board). */
            uint64_t typer = *reg64(base, GICR_TYPER) & ~GICR_TYPER_LAST;
            if (frame + 1u >= frames || ((v->part->cpu_mask >> (frame + 1u)) & 1u) == 0) {
                typer |= GICR_TYPER_LAST;
            }
            *val = size == 8 ? typer : off == GICR_TYPER ? (uint32_t)typer : typer >> 32;
        }
        return true;
    }
    if (!own) {
        return true; /* another partition's redistributor: reads as zero, writes ignored */
    }
    struct vcpu *t = &hyp_vcpu[frame]; /* the partition's CPU whose frame this is */
    if (off < GICR_SGI_OFFSET) {
        if (off == GICR_WAKER) {
            /* The guest sleeps and wakes a virtual view; the physical redistributor stays awake. */
            if (write) {
                t->vgic.gicr_waker = wval & GICR_WAKER_PS;
            } else {
                *val = t->vgic.gicr_waker | ((t->vgic.gicr_waker & GICR_WAKER_PS) ? GICR_WAKER_CA : 0u);
            }
        } else if (!write && (off == GICR_CTLR || off >= GICR_ID_START)) {
            *val = *reg32(base, off);
        }
        return true; /* LPI tables and the rest: RAZ/WI */
    }
    private_access(v, t, base + GICR_SGI_OFFSET, off - GICR_SGI_OFFSET, write, val, size);
    return true;
}

/* A trapping partition's access to the SGI/PPI registers of t, one of its CPUs: soff is the offset in
 * the registers' frame at sgi_base (GICv3: t's SGI_base; GICv2: the distributor, whose first words are
 * the calling CPU's bank, so t is v there). */
static void private_access(struct vcpu *v, struct vcpu *t, uintptr_t sgi_base, uint64_t soff, bool write,
                           uint64_t *val, unsigned size)
{
    uint32_t wval = (uint32_t)*val; /* the value of a 32-bit or byte write */
    /* A CPU the rtos shares (shared-core mode): its physical SGIs and timer are the rtos's, hidden like
     * the hypervisor's; Linux's enables and priorities are kept in t's view (vgic_cpu's priv_*), and its
     * PPIs are physically enabled as it says but stay below the rtos's priority mask. */
    bool shared = hyp_rtos_vcpu[t->cpu].part != NULL;
    uint32_t hidden = VGIC_HYP_PPIS | (shared ? (uint32_t)(VGIC_SHARED_RTOS_PRIVATE) : 0u);
    if (soff >= GICR_ISPENDR0 && soff < GICR_IPRIORITYR0 && (soff & (GICD_BITREG_SPAN - 1u)) == 0) {
        pend_active(v, t, sgi_base, soff, write, wval, val, hidden);
    } else if (soff >= GICR_ISENABLER0 && soff < GICR_IPRIORITYR0 && (soff & (GICD_BITREG_SPAN - 1u)) == 0) {
        /* ISENABLER0, ICENABLER0: one bit per SGI/PPI, kept physically (the physical SGIs 0..12 of a
         * trapping CPU are never raised, so their enables are the guest's own storage). */
        if (shared && write) {
            uint32_t bits = wval & ~hidden;
            t->vgic.priv_enabled =
                soff == GICR_ISENABLER0 ? t->vgic.priv_enabled | bits : t->vgic.priv_enabled & ~bits;
            *reg32(sgi_base, soff) = bits & VGIC_SHARED_LINUX_PPIS;
        } else if (shared) {
            *val = t->vgic.priv_enabled & ~hidden;
        } else if (write) {
            *reg32(sgi_base, soff) = wval & ~VGIC_HYP_PPIS;
        } else {
            *val = *reg32(sgi_base, soff) & ~VGIC_HYP_PPIS;
        }
    } else if (in(soff, GICR_IPRIORITYR0, GIC_SPI_BASE)) {
        /* One byte per SGI/PPI (soff is aligned to the access, so every intid here is below 32). */
        for (unsigned i = 0; i < size; i++) {
            unsigned intid = (unsigned)(soff - GICR_IPRIORITYR0) + i;
            bool visible = ((hidden >> intid) & 1u) == 0;
            if (shared && !write) {
                *val |= visible ? (uint64_t)t->vgic.priv_prio[intid] << (8u * i) : 0u;
            } else if (shared) {
                if (visible) {
                    t->vgic.priv_prio[intid] = (uint8_t)(wval >> (8u * i)); /* physically RTMUX_PRIO_LINUX */
                }
            } else if (!write) {
                *val |= (uint64_t)*reg8(sgi_base, soff + i) << (8u * i);
            } else if (!hyp_ppi(intid)) {
                *reg8(sgi_base, soff + i) = (uint8_t)(wval >> (8u * i));
            }
        }
    } else if (soff == GICR_ICFGR1) {
        /* PPIs; ICFGR0 (SGIs) is read-only. */
        uint32_t keep = ICFGR_FIELD(BOARD_INTID_GIC_MAINT) | ICFGR_FIELD(BOARD_INTID_HYP_TIMER) |
                        (shared ? ICFGR_FIELD(BOARD_INTID_PHYS_TIMER) : 0u);
        if (write) {
            *reg32(sgi_base, soff) = (*reg32(sgi_base, soff) & keep) | (wval & ~keep);
        } else {
            *val = *reg32(sgi_base, soff);
        }
    } else if (!write && (soff == GICR_IGROUPR0 || soff == GICR_ICFGR0)) {
        *val = *reg32(sgi_base, soff); /* IGROUPR0 (GICv3: all Group 1; GICv2: all Group 0), ICFGR0 */
    }
}

/* ---- GICv2 (gic_version() 2): one 4 KiB distributor ----
 *
 * The SPI registers are filtered as on a GICv3 (gicd_access), with GICD_ITARGETSR in place of
 * GICD_IROUTER. The first word of each per-interrupt register (INTIDs 0..31) is the calling CPU's own
 * bank, the GICv3 redistributor's SGI_base registers at the same offsets: a trapping partition's view
 * of them is private_access's; a partition that takes its interrupts directly (the rtos) reaches its
 * own bank unfiltered, as it reaches its redistributor frame on a GICv3. GICD_SGIR sends a trapping
 * partition's SGIs virtually, to its own CPUs (vgic_route.c), and a direct partition's physically, to
 * its own CPU or, for the V-Bus doorbell only, to any. Accesses: 32-bit to any register, 8-bit also to
 * IPRIORITYR, ITARGETSR, CPENDSGIR and SPENDSGIR (byte-accessible on a GICv2); anything else RAZ/WI. */

static bool v2_architected(uint64_t off, unsigned size)
{
    if ((size != 1 && size != 4) || off % size != 0 || off >= GICV2_GICD_SIZE) {
        return false;
    }
    return size == 4 || in(off, GICD_IPRIORITYR, GICD_IPRIORITYR_SPAN) ||
           in(off, GICD_ITARGETSR, GICD_ITARGETSR_SPAN) || in(off, GICD_CPENDSGIR, 2u * GICD_SGIR_SPAN);
}

/* Whether off is in the banked part (INTIDs 0..31) of a per-interrupt register. */
static bool v2_banked(uint64_t off)
{
    return (off >= GICD_IGROUPR && off < GICD_IPRIORITYR && (off & (GICD_BITREG_SPAN - 1u)) < 4u) ||
           in(off, GICD_IPRIORITYR, GIC_SPI_BASE) || in(off, GICD_ITARGETSR, GIC_SPI_BASE) ||
           in(off, GICD_ICFGR, 8u);
}

static void v2_raw(uintptr_t gicd, uint64_t off, bool write, uint64_t *val, unsigned size)
{
    if (size == 1 && write) {
        *reg8(gicd, off) = (uint8_t)*val;
    } else if (size == 1) {
        *val = *reg8(gicd, off);
    } else if (write) {
        *reg32(gicd, off) = (uint32_t)*val;
    } else {
        *val = *reg32(gicd, off);
    }
}

static void v2_sgir(struct vcpu *v, uint32_t sgir)
{
    unsigned sgi = sgir & GICD_SGIR_INTID_MASK;
    struct partition *p = v->part;
    if (p->kind == PART_LINUX) {
        vgic_send_sgi(v, sgi, vgic_sgir_targets(p, v->cpu, sgir));
        return;
    }
    /* The rtos: its own CPU, or the V-Bus doorbell to the CPU the hypervisor serves it on. */
    uint32_t filter = (sgir >> GICD_SGIR_FILTER_SHIFT) & GICD_SGIR_FILTER_MASK;
    uint32_t list = filter == GICD_SGIR_FILTER_SELF ? vgic_itargets_of(v->cpu)
                    : filter == GICD_SGIR_FILTER_LIST
                        ? (sgir >> GICD_SGIR_TARGETS_SHIFT) & GICD_SGIR_TARGETS_MASK
                        : 0u;
    for (unsigned c = 0; c < HYP_MAX_CPUS; c++) {
        bool named = (list & vgic_itargets_of(c)) != 0 && hyp_vcpu[c].part != NULL;
        if (named && (((p->cpu_mask >> c) & 1u) != 0 || sgi == VBUS_SGI_TO_HYP)) {
            gic_send_sgi(hyp_vcpu[c].mpidr, sgi);
        }
    }
}

/* GICD_CPENDSGIR / GICD_SPENDSGIR of a trapping partition: one byte per SGI, one bit per source. Its
 * SGIs are virtual and come from no particular CPU interface: pending reads as from interface 0, and a
 * write of any source bit sets or clears the SGI. */
static void v2_sgi_pending(struct vcpu *v, uint64_t off, bool write, uint64_t *val, unsigned size)
{
    bool set = off >= GICD_SPENDSGIR;
    unsigned first = (unsigned)(off - (set ? GICD_SPENDSGIR : GICD_CPENDSGIR));
    if (write) {
        uint32_t sgis = 0;
        for (unsigned i = 0; i < size; i++) {
            sgis |= ((*val >> (8u * i)) & 0xffu) != 0 ? 1u << (first + i) : 0u;
        }
        vgic_sgi_write(v, set ? GICR_ISPENDR0 : GICR_ICPENDR0, sgis & ~VGIC_HYP_PPIS);
        return;
    }
    uint32_t pending = 0, active = 0;
    vgic_private_state(v, &pending, &active);
    for (unsigned i = 0; i < size; i++) {
        *val |= ((pending >> (first + i)) & 1u) != 0 && !hyp_ppi(first + i) ? 1ull << (8u * i) : 0u;
    }
}

/* GICD_ITARGETSR of an SPI (one byte each): an owned SPI's is the physical byte, an emulated SPI's its
 * level source's CPU; a write names a CPU of the partition (vgic_route.c), whatever was written. */
static void v2_targets(const struct vgicd_hw *hw, struct partition *p, uint64_t off, bool write,
                       uint64_t *val, unsigned size)
{
    for (unsigned i = 0; i < size; i++) {
        unsigned intid = (unsigned)(off - GICD_ITARGETSR) + i;
        struct vgic_level *l = part_level(p, intid);
        bool own = part_owns_irq(p, intid);
        if (!own && l == NULL) {
            continue;
        }
        if (write) {
            unsigned cpu = vgic_itargets_cpu(p, (uint8_t)(*val >> (8u * i)));
            if (l != NULL) {
                l->cpu = (uint8_t)cpu;
            } else {
                *reg8(hw->gicd, off + i) = vgic_itargets_of(cpu);
            }
        } else {
            uint8_t t = l != NULL ? vgic_itargets_of(l->cpu) : *reg8(hw->gicd, off + i);
            *val |= (uint64_t)t << (8u * i);
        }
    }
}

bool vgicd_v2_mmio(struct vcpu *v, void *ctx, uint64_t off, bool write, uint64_t *val, unsigned size)
{
    const struct vgicd_hw *hw = ctx;
    if (!write) {
        *val = 0;
    }
    if (!v2_architected(off, size)) {
        return true;
    }
    bool direct = v->part->kind != PART_LINUX;
    if (off < GICD_IGROUPR || off >= GICV2_GICD_ID_START) {
        /* CTLR, TYPER, IIDR and the ID registers: readable, never writable by a partition. */
        if (!write) {
            *val = *reg32(hw->gicd, off);
        }
        return true;
    }
    if (off == GICD_SGIR) {
        if (write) {
            v2_sgir(v, (uint32_t)*val);
        }
        return true;
    }
    if (in(off, GICD_CPENDSGIR, 2u * GICD_SGIR_SPAN)) {
        if (direct) {
            v2_raw(hw->gicd, off, write, val, size);
        } else {
            v2_sgi_pending(v, off, write, val, size);
        }
        return true;
    }
    if (v2_banked(off)) {
        if (direct) {
            v2_raw(hw->gicd, off, write, val, size);
        } else if (in(off, GICD_ITARGETSR, GIC_SPI_BASE)) {
            if (!write) {
                v2_raw(hw->gicd, off, false, val, size); /* this CPU's interface, read-only */
            }
        } else {
            private_access(v, v, hw->gicd, off, write, val, size);
        }
        return true;
    }
    spin_lock(&gicd_lock);
    bool enabled = false;
    if (in(off, GICD_ITARGETSR, GICD_ITARGETSR_SPAN)) {
        v2_targets(hw, v->part, off, write, val, size);
    } else if (off < GICD_IGRPMODR) {
        enabled = gicd_access(hw, v->part, off, write, val, size);
    }
    spin_unlock(&gicd_lock);
    if (enabled) {
        vgic_levels_changed(v->part, v);
    }
    return true;
}
