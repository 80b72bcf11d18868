/*
 * Fuzzer of the hypervisor's MMIO emulation, built natively with AddressSanitizer and
 * UndefinedBehaviorSanitizer: the GIC distributor/redistributor filter (hyp/arch/arm64/vgicd.c) and the
 * emulated PL011 (hyp/core/vuart.c), driven as a hostile partition would drive them, with any offset,
 * any size (1, 2, 4, 8), aligned or not, across page and frame ends, reads and writes of random values,
 * from two partitions that own different CPUs and interrupts.
 *
 * The GIC handlers work on a fake register file surrounded by inaccessible pages (PROT_NONE): before and
 * after each region, and in place of the redistributor frames of CPUs the board does not have. A device
 * access the hypervisor should never make therefore crashes here (ASan reports the SEGV), and an
 * unaligned one is reported by UBSan's alignment check. After every access a reference model of the
 * filter (the policy in vgicd.c's header) says what the register file must hold and what a read must
 * return; the checks that matter for isolation are reported as such: no bit of an interrupt or CPU the
 * partition does not own changed, a read returns no bit of a non-owned interrupt or CPU, a read of n
 * bytes returns no bit above 8n.
 *
 * The emulated UART is checked against a model of its registers (each keeps within its width) and of
 * its rings: random interleavings of received characters, reads and writes never lose, duplicate or
 * reorder a character (test_hyp_vuart.c runs the receive ring on two threads).
 *
 *   fuzz_hyp_mmio [--seed N] [--seconds S] [--iterations N] [--sweep] [--isolation-only]
 *
 * Seeded and reproducible: the seed (random unless given) is printed first; a failure prints the seed,
 * the iteration and the access, and the command that replays it. --sweep first makes every access
 * (each offset, size and direction, both partitions) over the distributor and the board's
 * redistributor frames (and the first frame beyond them): 7 to 11 million accesses with 2 to 4 CPUs
 * (the seed draws the count), each followed by a comparison of the whole register file, which takes
 * minutes; --seconds then bounds the random accesses that follow, not the sweep. --isolation-only
 * checks the isolation properties and access sizes only, not the model's exact results (to judge
 * another access policy).
 */
#include <dlfcn.h>
#include <sanitizer/common_interface_defs.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "arch/vgic.h"
#include "arch/vgicd.h"
#include "arm64/gicv3.h"
#include "arm64/pl011.h"
#include "board.h"
#include "hyp/console.h"
#include "hyp/partition.h"
#include "hyp/vcpu.h"
#include "hyp/vuart.h"
#include "hyp_stubs.h"
#include "lib/vbus.h"
#include "vgic_stub.h"

/* vgic.c's: never reached, no partition here has an emulated SPI whose enabling would need it. */
void vgic_levels_changed(struct partition *p, struct vcpu *self)
{
    (void)p;
    (void)self;
    abort();
}

struct vcpu hyp_vcpu[HYP_MAX_CPUS];
struct vcpu hyp_rtos_vcpu[HYP_MAX_CPUS]; /* no CPU is shared here */
struct partition hyp_part[HYP_MAX_PARTITIONS];
unsigned hyp_nparts;

#define PAGE        4096u
#define GICR_REGION ((uint64_t)HYP_MAX_CPUS * BOARD_GICR_STRIDE)
#define SGI         GICR_SGI_OFFSET
/* The hypervisor's private interrupts (vgicd.c keeps them from the guest): maintenance, EL2 timer, the
 * kick SGI (13) and the V-Bus doorbell SGI. */
#define RESERVED_PPIS \
    ((1u << BOARD_INTID_GIC_MAINT) | (1u << BOARD_INTID_HYP_TIMER) | (1u << 13) | (1u << VBUS_SGI_TO_HYP))
/* The SGIs' bits of a redistributor register: virtual, the vGIC's (vgic_stub records them). */
#define SGI_BITS 0xffffu

/* ------------------------------------------------------------------------------------------------ */
/* Random numbers, seed, and the report of the access under test. */

static uint64_t rng;
static uint64_t seed;
static bool isolation_only; /* check isolation and sizes, not the exact emulation (another policy's) */
static const char *prog = "fuzz_hyp_mmio";

static uint64_t rnd(void)
{
    /* splitmix64: every seed gives a full-period, well-mixed sequence. */
    uint64_t z = (rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t below(uint64_t n)
{
    return rnd() % n;
}

static struct {
    const char *phase;
    uint64_t iter;
    char what[200];
} cur;

static void print_case(void)
{
    fprintf(stderr, "fuzz: seed 0x%llx, %s iteration %llu: %s\n", (unsigned long long)seed, cur.phase,
            (unsigned long long)cur.iter, cur.what);
    fprintf(stderr, "fuzz: replay with: %s --seed 0x%llx --iterations %llu%s%s\n", prog,
            (unsigned long long)seed, (unsigned long long)cur.iter + 1u,
            strcmp(cur.phase, "sweep") == 0 ? " --sweep" : "", isolation_only ? " --isolation-only" : "");
}

static void __attribute__((format(printf, 1, 2), noreturn)) fail(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "fuzz: FAILED: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
    print_case();
    exit(1);
}

/* Sanitizer reports end the process without returning here: print the case from their death callback.
 * GCC links ASan and UBSan as two libraries, each with its own copy of the callback, so both are set. */
static void print_case_on_sanitizer_report(void)
{
    typedef void (*set_cb_t)(void (*)(void));
    __sanitizer_set_death_callback(print_case);
    void *ubsan = dlopen("libubsan.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (ubsan != NULL) {
        set_cb_t set = (set_cb_t)dlsym(ubsan, "__sanitizer_set_death_callback");
        if (set != NULL) {
            set(print_case);
        }
    }
}

static uint64_t size_mask(unsigned size)
{
    return size >= 8 ? ~0ull : (1ull << (8u * size)) - 1u;
}

static uint32_t rd32(const uint8_t *m, uint64_t off)
{
    uint32_t v;
    memcpy(&v, m + off, 4);
    return v;
}

static uint64_t rd64(const uint8_t *m, uint64_t off)
{
    uint64_t v;
    memcpy(&v, m + off, 8);
    return v;
}

static void wr32(uint8_t *m, uint64_t off, uint32_t v)
{
    memcpy(m + off, &v, 4);
}

static void wr64(uint8_t *m, uint64_t off, uint64_t v)
{
    memcpy(m + off, &v, 8);
}

/* Values a guest might write: random, all ones, zero, or one bit. */
static uint64_t pick_val(void)
{
    switch (below(7)) {
    case 0:
        return ~0ull;
    case 1:
        return 0;
    case 2:
        return 1ull << below(64);
    case 3:
        return below(8); /* a CPU's affinity (IROUTER), a low SGI */
    default:
        return rnd();
    }
}

static unsigned pick_size(void)
{
    return 1u << below(4);
}

/* ------------------------------------------------------------------------------------------------ */
/* The system: two partitions, A and B, each owning one or more CPUs of a board with ncpus CPUs and a
 * random share of the SPIs. */

static struct vgicd_hw hw;
static unsigned ncpus;
static struct partition *pa, *pb;

static bool owns_cpu(const struct partition *p, uint64_t cpu)
{
    return cpu < HYP_MAX_CPUS && ((p->cpu_mask >> cpu) & 1u) != 0;
}

/* One of p's CPUs, at random: the one making the access. */
static struct vcpu *vcpu_of(const struct partition *p)
{
    unsigned n = (unsigned)__builtin_popcountll(p->cpu_mask), k = (unsigned)below(n);
    for (unsigned c = 0; c < HYP_MAX_CPUS; c++) {
        if (owns_cpu(p, c) && k-- == 0) {
            return &hyp_vcpu[c];
        }
    }
    abort();
}

static void setup_system(unsigned cpus)
{
    ncpus = cpus;
    hw.ncpus = cpus;
    memset(hyp_part, 0, sizeof(hyp_part));
    memset(hyp_vcpu, 0, sizeof(hyp_vcpu));
    hyp_nparts = 2;
    pa = &hyp_part[0];
    pb = &hyp_part[1];
    pa->name = "A";
    pb->name = "B";
    /* Each CPU: A's, B's or nobody's; each partition gets at least one. */
    unsigned ca = (unsigned)below(cpus), cb = (unsigned)below(cpus - 1u);
    cb += cb >= ca;
    pa->cpu_mask = 1ull << ca;
    pb->cpu_mask = 1ull << cb;
    for (unsigned c = 0; c < cpus; c++) {
        uint64_t r = below(3);
        if (c != ca && c != cb && r < 2) {
            (r == 0 ? pa : pb)->cpu_mask |= 1ull << c;
        }
    }
    for (unsigned c = 0; c < HYP_MAX_CPUS; c++) {
        hyp_vcpu[c].cpu = c;
        hyp_vcpu[c].mpidr = c;
        hyp_vcpu[c].part = owns_cpu(pa, c) ? pa : owns_cpu(pb, c) ? pb : NULL;
    }
    /* Each SPI: A's (1 in 6), B's (1 in 6) or nobody's. */
    for (unsigned intid = GIC_SPI_BASE; intid < HYP_MAX_INTID; intid++) {
        uint64_t r = below(6);
        struct partition *p = r == 0 ? pa : r == 1 ? pb : NULL;
        if (p != NULL) {
            p->vgic.irqs[intid / 32u] |= 1u << (intid % 32u);
        }
    }
}

/* The GICD_IROUTER value routing to p's CPU that `irouter` names, or to its first CPU when it names
 * none of p's (1-of-N routing, bit 31, included). MPIDR layout: Aff3 at [39:32], Aff2..0 at [23:0]. */
static uint64_t route_of(const struct partition *p, uint64_t irouter)
{
    uint64_t aff = (irouter & 0xffffffu) | (((irouter >> 32) & 0xffu) << 24);
    unsigned cpu = (unsigned)__builtin_ctzll(p->cpu_mask);
    for (unsigned c = 0; c < HYP_MAX_CPUS && (irouter & (1ull << 31)) == 0; c++) {
        if (owns_cpu(p, c) && hyp_vcpu[c].mpidr == aff) {
            cpu = c;
        }
    }
    uint64_t m = hyp_vcpu[cpu].mpidr;
    return (m & 0xffffffu) | (((m >> 24) & 0xffu) << 32);
}

/* ------------------------------------------------------------------------------------------------ */
/* The fake register files: mem is what the hypervisor reads and writes, shadow what it must hold. */

struct region {
    const char *name;
    uint8_t *mem;
    uint8_t *shadow;
    uint64_t size; /* the offsets the handler may be given */
    uint64_t live; /* bytes that exist, from the start (the rest, and a page each side, is PROT_NONE) */
};

static struct region gicd = {.name = "GICD", .size = GICD_SIZE};
static struct region gicr = {.name = "GICR", .size = GICR_REGION};

static uint8_t *map_guarded(uint64_t size, uint64_t live)
{
    uint8_t *base = mmap(NULL, size + 2u * PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED || (live > 0 && mprotect(base + PAGE, live, PROT_READ | PROT_WRITE) != 0)) {
        perror("fuzz: mmap");
        exit(2);
    }
    return base + PAGE;
}

static void map_regions(void)
{
    gicd.live = GICD_SIZE;
    gicr.live = (uint64_t)ncpus * BOARD_GICR_STRIDE;
    gicd.mem = map_guarded(gicd.size, gicd.live);
    gicr.mem = map_guarded(gicr.size, gicr.live);
    gicd.shadow = malloc(gicd.size);
    gicr.shadow = malloc(gicr.size);
    if (gicd.shadow == NULL || gicr.shadow == NULL) {
        exit(2);
    }
    hw.gicd = (uintptr_t)gicd.mem;
    hw.gicr = (uintptr_t)gicr.mem;
}

/* Random contents, with a plausible GICR_TYPER (its affinity and Last) in every frame. */
static void refill(struct region *r)
{
    for (uint64_t i = 0; i < r->live; i += 8) {
        wr64(r->mem, i, rnd());
    }
    if (r == &gicr) {
        for (unsigned f = 0; f < ncpus; f++) {
            uint64_t typer = ((uint64_t)f << GICR_TYPER_AFF_SHIFT) | (rnd() & 0xffffffu & ~GICR_TYPER_LAST);
            wr64(r->mem, f * BOARD_GICR_STRIDE + GICR_TYPER, typer | (f + 1u == ncpus ? GICR_TYPER_LAST : 0));
        }
    }
    memcpy(r->shadow, r->mem, r->live);
}

/* Set/clear registers (GICD_ISENABLER..ICACTIVER and the redistributor's copies): a written 1 sets or
 * clears that bit, a 0 does nothing, so comparing memory before and after cannot tell what was written.
 * For a write access, these words are zeroed in mem (the state stays in shadow): afterwards mem holds
 * exactly the ones the hypervisor wrote, which are then applied to the state. */
static bool set_register(uint64_t word_in_frame)
{
    return ((word_in_frame % GICR_FRAME_SIZE - GICD_ISENABLER) / GICD_BITREG_SPAN) % 2u == 0;
}

static void for_each_setclear(const struct region *r, void (*fn)(const struct region *, uint64_t))
{
    for (uint64_t base = 0; base < r->live; base += r == &gicd ? GICD_SIZE : BOARD_GICR_STRIDE) {
        uint64_t first = base + (r == &gicd ? 0 : SGI);
        for (uint64_t o = first + GICD_ISENABLER; o < first + GICD_IPRIORITYR; o += 4) {
            fn(r, o);
        }
    }
}

static void zero_word(const struct region *r, uint64_t off)
{
    wr32(r->mem, off, 0);
}

/* ------------------------------------------------------------------------------------------------ */
/* The reference model: the filter as the header of vgicd.c specifies it. */

/* What an access must do: a read's value; a write's effect as bytes (set) and a set/clear word. */
struct effect {
    uint64_t val;
    unsigned nbytes;
    struct {
        uint64_t off;
        uint8_t v;
    } byte[8];
    bool has_sc;
    uint64_t sc_off;
    uint32_t sc_written;
};

static void set_byte(struct effect *e, uint64_t off, uint8_t v)
{
    e->byte[e->nbytes].off = off;
    e->byte[e->nbytes].v = v;
    e->nbytes++;
}

static void set_word(struct effect *e, uint64_t off, uint32_t v)
{
    for (unsigned i = 0; i < 4; i++) {
        set_byte(e, off + i, (uint8_t)(v >> (8u * i)));
    }
}

/* Architected distributor accesses: naturally aligned; 32-bit anywhere, 64-bit to IROUTER, bytes to
 * IPRIORITYR (and ITARGETSR, which affinity routing makes RAZ/WI, so the same as refused). */
static bool gicd_architected(uint64_t off, unsigned size)
{
    if (off % size != 0 || off >= GICD_SIZE) {
        return false;
    }
    if (size == 4) {
        return true;
    }
    if (size == 8) {
        return off >= GICD_IROUTER && off < GICD_IROUTER_END;
    }
    return size == 1 && off >= GICD_IPRIORITYR && off < GICD_IPRIORITYR + GICD_IPRIORITYR_SPAN;
}

/* Owned-bit mask of the 32-bit bit-per-interrupt register word at off (IGROUPR..ICACTIVER). */
static uint32_t owned_bits(const struct partition *p, uint64_t off)
{
    unsigned first = (unsigned)((off - GICD_IGROUPR) % GICD_BITREG_SPAN) * 8u;
    uint32_t m = 0;
    for (unsigned i = 0; i < 32; i++) {
        m |= part_owns_irq(p, first + i) ? 1u << i : 0u;
    }
    return m;
}

static uint32_t owned_cfg(const struct partition *p, uint64_t off)
{
    unsigned first = (unsigned)(off - GICD_ICFGR) * 4u;
    uint32_t m = 0;
    for (unsigned i = 0; i < 16; i++) {
        m |= part_owns_irq(p, first + i) ? 3u << (2u * i) : 0u;
    }
    return m;
}

static void model_gicd(const struct partition *p, uint64_t off, unsigned size, bool write, uint64_t val,
                       struct effect *e)
{
    memset(e, 0, sizeof(*e));
    if (!gicd_architected(off, size)) {
        return; /* RAZ/WI */
    }
    const uint8_t *s = gicd.shadow;
    uint32_t v32 = (uint32_t)val;
    if (off < GICD_TYPER2 + 4u || off >= GICD_ID_START) {
        if (!write) {
            e->val = rd32(s, off) & (off == GICD_TYPER ? ~GICD_TYPER_LPIS : ~0u);
        }
    } else if (off >= GICD_IGROUPR && off < GICD_IPRIORITYR) {
        uint32_t m = owned_bits(p, off);
        if (!write) {
            e->val = rd32(s, off) & m;
        } else if (off < GICD_ISENABLER) {
            set_word(e, off, rd32(s, off) | m); /* owned interrupts stay Group 1 */
        } else {
            e->has_sc = true;
            e->sc_off = off;
            e->sc_written = v32 & m;
        }
    } else if (off >= GICD_IPRIORITYR && off < GICD_IPRIORITYR + GICD_IPRIORITYR_SPAN) {
        for (unsigned i = 0; i < size; i++) {
            bool own = part_owns_irq(p, (unsigned)(off - GICD_IPRIORITYR) + i);
            if (!write) {
                e->val |= own ? (uint64_t)s[off + i] << (8u * i) : 0u;
            } else if (own) {
                set_byte(e, off + i, (uint8_t)(val >> (8u * i)));
            }
        }
    } else if (off >= GICD_ICFGR && off < GICD_ICFGR + GICD_ICFGR_SPAN) {
        uint32_t m = owned_cfg(p, off);
        if (!write) {
            e->val = rd32(s, off) & m;
        } else {
            set_word(e, off, (rd32(s, off) & ~m) | (v32 & m));
        }
    } else if (off >= GICD_IROUTER && off < GICD_IROUTER_END) {
        uint64_t reg = off & ~7ull;
        if (part_owns_irq(p, (unsigned)((reg - GICD_IROUTER) / 8u))) {
            if (!write) {
                e->val = size == 8 ? rd64(s, off) : rd32(s, off);
            } else {
                uint64_t old = rd64(s, reg);
                uint64_t next = size == 8    ? val
                                : (off & 4u) ? (old & 0xffffffffull) | ((uint64_t)v32 << 32)
                                             : (old & ~0xffffffffull) | v32;
                uint64_t aff = route_of(p, next); /* routing is forced to one of the owner's CPUs */
                set_word(e, reg, (uint32_t)aff);
                set_word(e, reg + 4u, (uint32_t)(aff >> 32));
            }
        }
    }
}

static bool gicr_architected(uint64_t off, unsigned size)
{
    uint64_t o = off % BOARD_GICR_STRIDE;
    if (off % size != 0 || off >= GICR_REGION) {
        return false;
    }
    if (size == 4) {
        return true;
    }
    if (size == 8) {
        return o == GICR_TYPER;
    }
    return size == 1 && o >= SGI + GICR_IPRIORITYR0 && o < SGI + GICR_IPRIORITYR0 + GIC_SPI_BASE;
}

static bool reserved_ppi(unsigned intid)
{
    return intid < 32u && ((RESERVED_PPIS >> intid) & 1u) != 0;
}

static uint32_t model_waker[HYP_MAX_CPUS];
/* Each CPU's virtual SGIs, pending and active, as the filter must have left them in the vGIC. */
static uint32_t model_vpend[HYP_MAX_CPUS], model_vact[HYP_MAX_CPUS];

static void model_gicr(const struct vcpu *v, uint64_t off, unsigned size, bool write, uint64_t val,
                       struct effect *e)
{
    memset(e, 0, sizeof(*e));
    uint64_t frame = off / BOARD_GICR_STRIDE, o = off % BOARD_GICR_STRIDE;
    if (frame >= ncpus || !gicr_architected(off, size)) {
        return; /* no such CPU, or not an architected access: RAZ/WI */
    }
    const struct partition *p = v->part;
    const uint8_t *s = gicr.shadow;
    uint32_t v32 = (uint32_t)val;
    if (o == GICR_TYPER || o == GICR_TYPER + 4u) {
        if (!write) {
            uint64_t typer = rd64(s, off & ~7ull) & ~GICR_TYPER_LAST;
            if (frame + 1u >= ncpus || !owns_cpu(p, frame + 1u)) {
                typer |= GICR_TYPER_LAST;
            }
            e->val = size == 8 ? typer : o == GICR_TYPER ? (uint32_t)typer : typer >> 32;
        }
        return;
    }
    if (o == GICR_PIDR2) {
        e->val = write ? 0 : rd32(s, off);
        return;
    }
    if (!owns_cpu(p, frame)) {
        return;
    }
    if (o == GICR_WAKER) {
        uint32_t *w = &model_waker[frame];
        if (write) {
            *w = v32 & GICR_WAKER_PS;
        } else {
            e->val = *w | ((*w & GICR_WAKER_PS) ? GICR_WAKER_CA : 0u);
        }
        return;
    }
    if (o < SGI) {
        if (!write && (o == GICR_CTLR || o >= GICR_ID_START)) {
            e->val = rd32(s, off);
        }
        return;
    }
    uint64_t so = o - SGI;
    if (so >= GICR_ISPENDR0 && so < GICR_IPRIORITYR0) {
        /* Pending and active: SGIs are the vGIC's (in the accessing CPU's own frame; in another CPU's
         * frame of the partition a set-pending sends them there), PPIs physical. */
        if (so % GICD_BITREG_SPAN != 0) {
            return;
        }
        bool self = frame == v->cpu, pending = so < GICR_ISACTIVER0, set = so % (2u * GICD_BITREG_SPAN) == 0;
        if (write) {
            uint32_t sgis = v32 & SGI_BITS & ~RESERVED_PPIS;
            uint32_t *m = pending ? &model_vpend[frame] : &model_vact[frame];
            if (self || (pending && set)) {
                *m = set ? *m | sgis : *m & ~sgis;
            }
            e->has_sc = true;
            e->sc_off = off;
            e->sc_written = v32 & ~SGI_BITS & ~RESERVED_PPIS;
        } else {
            uint32_t phys = rd32(s, off) & ~SGI_BITS & ~RESERVED_PPIS;
            e->val = phys | (self ? (pending ? model_vpend[frame] : model_vact[frame]) : 0u);
        }
    } else if (so >= GICR_ISENABLER0 && so < GICR_IPRIORITYR0) {
        if (so % GICD_BITREG_SPAN != 0) {
            return;
        }
        if (write) {
            e->has_sc = true;
            e->sc_off = off;
            e->sc_written = v32 & ~RESERVED_PPIS;
        } else {
            e->val = rd32(s, off) & ~RESERVED_PPIS;
        }
    } else if (so >= GICR_IPRIORITYR0 && so < GICR_IPRIORITYR0 + GIC_SPI_BASE) {
        for (unsigned i = 0; i < size; i++) {
            unsigned intid = (unsigned)(so - GICR_IPRIORITYR0) + i;
            if (!write) {
                e->val |= (uint64_t)s[off + i] << (8u * i);
            } else if (!reserved_ppi(intid)) {
                set_byte(e, off + i, (uint8_t)(val >> (8u * i)));
            }
        }
    } else if (so == GICR_ICFGR1) {
        uint32_t keep =
            (3u << (2u * (BOARD_INTID_GIC_MAINT % 16u))) | (3u << (2u * (BOARD_INTID_HYP_TIMER % 16u)));
        if (write) {
            set_word(e, off, (rd32(s, off) & keep) | (v32 & ~keep));
        } else {
            e->val = rd32(s, off);
        }
    } else if (!write && (so == GICR_IGROUPR0 || so == GICR_ICFGR0)) {
        e->val = rd32(s, off);
    }
}

/* ------------------------------------------------------------------------------------------------ */
/* Isolation oracles, independent of the model: which bits a partition may see and change. */

/* The interrupt a distributor bit belongs to, or -1 for bits that are no interrupt's. */
static int gicd_intid(uint64_t byte, unsigned bit)
{
    if (byte >= GICD_IGROUPR && byte < GICD_IPRIORITYR) {
        return (int)(((byte - GICD_IGROUPR) % GICD_BITREG_SPAN) * 8u + bit);
    }
    if (byte >= GICD_IPRIORITYR && byte < GICD_IPRIORITYR + GICD_IPRIORITYR_SPAN) {
        return (int)(byte - GICD_IPRIORITYR);
    }
    if (byte >= GICD_ICFGR && byte < GICD_ICFGR + GICD_ICFGR_SPAN) {
        return (int)((byte - GICD_ICFGR) * 4u + bit / 2u);
    }
    if (byte >= GICD_IROUTER && byte < GICD_IROUTER_END) {
        return (int)((byte - GICD_IROUTER) / 8u);
    }
    return -1;
}

static bool gicd_may_change(const struct partition *p, uint64_t byte, unsigned bit)
{
    int intid = gicd_intid(byte, bit);
    return intid >= 0 && part_owns_irq(p, (unsigned)intid);
}

static bool gicd_may_read(const struct partition *p, uint64_t byte, unsigned bit)
{
    if (byte < GICD_TYPER2 + 4u || byte >= GICD_ID_START) {
        return true; /* CTLR, TYPER, IIDR, TYPER2, identification */
    }
    int intid = gicd_intid(byte, bit);
    return intid >= 0 && part_owns_irq(p, (unsigned)intid);
}

/* In the redistributor: identification of any CPU's frame (so the guest finds its own); its own frame's
 * registers; nothing of another CPU's frame. */
static bool gicr_may_read(const struct partition *p, uint64_t byte, unsigned bit)
{
    (void)bit;
    uint64_t frame = byte / BOARD_GICR_STRIDE, o = byte % BOARD_GICR_STRIDE;
    if (frame >= ncpus) {
        return false;
    }
    if ((o >= GICR_TYPER && o < GICR_TYPER + 8u) || (o >= GICR_PIDR2 && o < GICR_PIDR2 + 4u)) {
        return true;
    }
    return owns_cpu(p, frame);
}

/* Only the SGI/PPI registers of its own CPU's frame, never the hypervisor's PPIs. */
static bool gicr_may_change(const struct partition *p, uint64_t byte, unsigned bit)
{
    uint64_t frame = byte / BOARD_GICR_STRIDE, o = byte % BOARD_GICR_STRIDE;
    if (frame >= ncpus || !owns_cpu(p, frame) || o < SGI) {
        return false;
    }
    uint64_t so = o - SGI;
    if (so >= GICR_ISENABLER0 && so < GICR_IPRIORITYR0) {
        return so % GICD_BITREG_SPAN < 4u && !reserved_ppi((unsigned)(so % 4u) * 8u + bit);
    }
    if (so >= GICR_IPRIORITYR0 && so < GICR_IPRIORITYR0 + GIC_SPI_BASE) {
        return !reserved_ppi((unsigned)(so - GICR_IPRIORITYR0));
    }
    if (so >= GICR_ICFGR1 && so < GICR_ICFGR1 + 4u) {
        return !reserved_ppi(GIC_PPI_BASE + (unsigned)(so - GICR_ICFGR1) * 4u + bit / 2u);
    }
    return false;
}

static void describe_bit(const struct region *r, uint64_t byte, unsigned bit, char *buf, size_t n)
{
    if (r == &gicd) {
        int intid = gicd_intid(byte, bit);
        if (intid >= 0) {
            snprintf(buf, n, "GICD byte 0x%llx bit %u (INTID %d, owner %s)", (unsigned long long)byte, bit,
                     intid,
                     part_owns_irq(pa, (unsigned)intid)   ? "A"
                     : part_owns_irq(pb, (unsigned)intid) ? "B"
                                                          : "none");
        } else {
            snprintf(buf, n, "GICD byte 0x%llx bit %u (no interrupt's)", (unsigned long long)byte, bit);
        }
    } else {
        uint64_t frame = byte / BOARD_GICR_STRIDE;
        snprintf(buf, n, "GICR frame %llu (CPU of %s) byte 0x%llx bit %u", (unsigned long long)frame,
                 owns_cpu(pa, frame)   ? "A"
                 : owns_cpu(pb, frame) ? "B"
                                       : "nobody",
                 (unsigned long long)(byte % BOARD_GICR_STRIDE), bit);
    }
}

/* ------------------------------------------------------------------------------------------------ */
/* One GIC access through the handler, and every check. */

/* Coverage: writes the model expects to change something, reads expected to return something. */
static uint64_t effective_writes, nonzero_reads, rx_chars;

static const struct effect *check_effect;
static const struct partition *check_part;

static void check_setclear_word(const struct region *r, uint64_t off)
{
    uint32_t written = rd32(r->mem, off);
    uint32_t expect = check_effect->has_sc && check_effect->sc_off == off ? check_effect->sc_written : 0;
    if (written != expect) {
        bool (*may)(const struct partition *, uint64_t, unsigned) =
            r == &gicd ? gicd_may_change : gicr_may_change;
        for (unsigned b = 0; b < 32; b++) {
            if (((written >> b) & 1u) && !may(check_part, off + b / 8u, b % 8u)) {
                char d[120];
                describe_bit(r, off + b / 8u, b % 8u, d, sizeof(d));
                fail("ISOLATION: wrote 1 to a set/clear register bit the partition does not own: %s", d);
            }
        }
        if (!isolation_only) {
            fail("%s set/clear register at 0x%llx: hypervisor wrote 0x%08x, model 0x%08x", r->name,
                 (unsigned long long)off, written, expect);
        }
    }
    uint32_t state = rd32(r->shadow, off);
    state = set_register(off % BOARD_GICR_STRIDE) ? state | written : state & ~written;
    wr32(r->shadow, off, state);
    wr32(r->mem, off, state);
}

static void compare_region(const struct region *r, const struct partition *p)
{
    if (memcmp(r->mem, r->shadow, r->live) == 0) {
        return;
    }
    bool (*may)(const struct partition *, uint64_t, unsigned) =
        r == &gicd ? gicd_may_change : gicr_may_change;
    for (uint64_t i = 0; i < r->live; i++) {
        uint8_t diff = r->mem[i] ^ r->shadow[i];
        for (unsigned b = 0; diff != 0 && b < 8; b++) {
            if ((diff >> b) & 1u) {
                char d[120];
                describe_bit(r, i, b, d, sizeof(d));
                if (!may(p, i, b)) {
                    fail("ISOLATION: a bit the partition may not change changed: %s", d);
                }
                if (!isolation_only) {
                    fail("%s byte 0x%llx is 0x%02x, model 0x%02x (%s)", r->name, (unsigned long long)i,
                         r->mem[i], r->shadow[i], d);
                }
            }
        }
        r->shadow[i] = r->mem[i];
    }
}

static void gic_access(struct region *r, const struct partition *p, uint64_t off, unsigned size, bool write,
                       uint64_t wval)
{
    struct vcpu *v = vcpu_of(p);
    if (r == &gicd) {
        snprintf(cur.what, sizeof(cur.what), "partition %s: GICD %s of %u bytes at 0x%llx, value 0x%llx",
                 p->name, write ? "write" : "read", size, (unsigned long long)off, (unsigned long long)wval);
    } else {
        snprintf(cur.what, sizeof(cur.what),
                 "partition %s: GICR %s of %u bytes at 0x%llx (frame %llu + 0x%llx), value 0x%llx", p->name,
                 write ? "write" : "read", size, (unsigned long long)off,
                 (unsigned long long)(off / BOARD_GICR_STRIDE), (unsigned long long)(off % BOARD_GICR_STRIDE),
                 (unsigned long long)wval);
    }
    struct effect e;
    if (r == &gicd) {
        model_gicd(p, off, size, write, wval, &e);
    } else {
        model_gicr(v, off, size, write, wval, &e);
    }
    if (write) {
        for_each_setclear(r, zero_word);
    }
    uint64_t val = write ? wval : 0xdeadbeefcafef00dull; /* a read must set every bit of its value */
    bool ok =
        r == &gicd ? vgicd_mmio(v, &hw, off, write, &val, size) : vgicr_mmio(v, &hw, off, write, &val, size);
    if (!ok) {
        fail("handler refused the access (the policy is RAZ/WI: never an abort)");
    }
    effective_writes += write && (e.nbytes > 0 || (e.has_sc && e.sc_written != 0));
    nonzero_reads += !write && e.val != 0;
    if (write) {
        check_effect = &e;
        check_part = p;
        for_each_setclear(r, check_setclear_word);
        for (unsigned i = 0; i < e.nbytes; i++) {
            r->shadow[e.byte[i].off] = e.byte[i].v;
        }
        for (unsigned c = 0; r == &gicr && c < HYP_MAX_CPUS; c++) {
            if (hyp_vcpu[c].vgic.gicr_waker != model_waker[c] && (!isolation_only || !owns_cpu(p, c))) {
                fail("CPU %u's virtual GICR_WAKER is 0x%x, model 0x%x", c, hyp_vcpu[c].vgic.gicr_waker,
                     model_waker[c]);
            }
            bool changed = vgic_stub.pending[c] != model_vpend[c] || vgic_stub.active[c] != model_vact[c];
            if (changed && !owns_cpu(p, c)) {
                fail("ISOLATION: CPU %u's virtual SGIs changed (pending 0x%x, active 0x%x) by partition %s",
                     c, vgic_stub.pending[c], vgic_stub.active[c], p->name);
            }
            if (changed && !isolation_only) {
                fail("CPU %u's virtual SGIs: pending 0x%x, active 0x%x; model 0x%x, 0x%x", c,
                     vgic_stub.pending[c], vgic_stub.active[c], model_vpend[c], model_vact[c]);
            }
            model_waker[c] = hyp_vcpu[c].vgic.gicr_waker;
            model_vpend[c] = vgic_stub.pending[c];
            model_vact[c] = vgic_stub.active[c];
        }
    }
    compare_region(r, p);
    if (write) {
        return;
    }
    if (size < 8 && (val >> (8u * size)) != 0) {
        fail("a read of %u bytes returned 0x%llx: bits above %u", size, (unsigned long long)val, 8u * size);
    }
    bool (*may)(const struct partition *, uint64_t, unsigned) = r == &gicd ? gicd_may_read : gicr_may_read;
    for (unsigned b = 0; b < 8u * size; b++) {
        if (((val >> b) & 1u) && !may(p, off + b / 8u, b % 8u)) {
            char d[120];
            describe_bit(r, off + b / 8u, b % 8u, d, sizeof(d));
            fail("ISOLATION: read returned 0x%llx, with a bit the partition may not see: %s",
                 (unsigned long long)val, d);
        }
    }
    if (val != e.val && !isolation_only) {
        fail("read returned 0x%llx, model 0x%llx", (unsigned long long)val, (unsigned long long)e.val);
    }
}

/* ------------------------------------------------------------------------------------------------ */
/* Offsets worth trying: register starts and ends, owned and foreign interrupts' registers, page ends. */

/* An interrupt: often one the partition owns, else any SPI. */
static unsigned pick_intid(const struct partition *p)
{
    unsigned intid = GIC_SPI_BASE + (unsigned)below(HYP_MAX_INTID - GIC_SPI_BASE);
    for (unsigned tries = 0; below(2) && tries < 64 && !part_owns_irq(p, intid); tries++) {
        intid = GIC_SPI_BASE + (unsigned)below(HYP_MAX_INTID - GIC_SPI_BASE);
    }
    return intid;
}

/* A register of an interrupt, accessed as a driver would (aligned, its natural size): the accesses that
 * do something, so the model's expectations are exercised and not only RAZ/WI. */
static uint64_t pick_gicd_register(const struct partition *p, unsigned *size)
{
    unsigned intid = pick_intid(p);
    *size = 4;
    switch (below(6)) {
    case 0:
        return GICD_IGROUPR + GICD_BITREG_SPAN * below(7) + intid / 32u * 4u;
    case 1:
        *size = below(2) ? 1u : 4u;
        return GICD_IPRIORITYR + (*size == 1 ? intid : intid & ~3u);
    case 2:
        return GICD_ICFGR + intid / 16u * 4u;
    case 3:
        return GICD_IGRPMODR + intid / 32u * 4u;
    default:
        *size = below(2) ? 8u : 4u;
        return GICD_IROUTER + intid * 8u + (*size == 4 && below(2) ? 4u : 0u);
    }
}

static uint64_t pick_gicr_register(const struct partition *p, unsigned *size)
{
    uint64_t frame = below(4) ? (uint64_t)vcpu_of(p)->cpu : below(ncpus);
    static const uint64_t regs[] = {
        GICR_CTLR,           GICR_TYPER,          GICR_TYPER + 4u,       GICR_WAKER,
        GICR_PIDR2,          SGI + GICR_IGROUPR0, SGI + GICR_ISENABLER0, SGI + GICR_ICENABLER0,
        SGI + GICR_ISPENDR0, SGI + GICD_ICPENDR,  SGI + GICD_ISACTIVER,  SGI + GICR_ICACTIVER0,
        SGI + GICR_ICFGR0,   SGI + GICR_ICFGR1};
    uint64_t off = regs[below(sizeof(regs) / sizeof(regs[0]))];
    *size = off == GICR_TYPER && below(2) ? 8u : 4u;
    if (below(3) == 0) {
        *size = below(2) ? 1u : 4u;
        off = SGI + GICR_IPRIORITYR0 + below(GIC_SPI_BASE) / *size * *size;
    }
    return frame * BOARD_GICR_STRIDE + off;
}

static uint64_t pick_gicd_off(void)
{
    static const uint64_t spots[] = {GICD_CTLR,
                                     GICD_TYPER,
                                     GICD_IIDR,
                                     GICD_TYPER2,
                                     0x10,
                                     0x40,
                                     GICD_IGROUPR,
                                     GICD_ISENABLER,
                                     GICD_ICACTIVER + 0x7c,
                                     GICD_IPRIORITYR,
                                     GICD_IPRIORITYR + 0x3fc,
                                     0x800,
                                     GICD_ICFGR,
                                     GICD_ICFGR + 0xfc,
                                     GICD_IGRPMODR,
                                     0xe00,
                                     0xf00,
                                     GICD_IROUTER,
                                     GICD_IROUTER + 0x100,
                                     GICD_IROUTER_END - 8u,
                                     GICD_IROUTER_END,
                                     GICD_ID_START,
                                     0xffe8,
                                     0xfffc};
    int64_t delta = (int64_t)below(17) - 8;
    uint64_t off;
    switch (below(8)) {
    case 0:
    case 1:
        return below(GICD_SIZE);
    case 2:
    case 3:
        off = spots[below(sizeof(spots) / sizeof(spots[0]))];
        break;
    case 4:
    case 5: {
        unsigned size;
        off = pick_gicd_register(below(2) ? pa : pb, &size);
        break;
    }
    case 6:
        return (below(GICD_SIZE / PAGE) + 1u) * PAGE - 1u - below(8); /* straddles a page end */
    default:
        return GICD_SIZE - 1u - below(16);
    }
    off = (uint64_t)((int64_t)off + delta);
    return off < GICD_SIZE ? off : below(GICD_SIZE);
}

static uint64_t pick_gicr_off(void)
{
    static const uint64_t spots[] = {GICR_CTLR,
                                     4,
                                     GICR_TYPER,
                                     GICR_TYPER + 4u,
                                     0x10,
                                     GICR_WAKER,
                                     0x70,
                                     0x78,
                                     GICR_ID_START,
                                     GICR_PIDR2,
                                     0xfffc,
                                     SGI + GICR_IGROUPR0,
                                     SGI + GICR_ISENABLER0,
                                     SGI + GICR_ICENABLER0,
                                     SGI + GICR_ISPENDR0,
                                     SGI + GICR_ICACTIVER0,
                                     SGI + GICR_IPRIORITYR0,
                                     SGI + GICR_IPRIORITYR0 + 24u,
                                     SGI + GICR_IPRIORITYR0 + 28u,
                                     SGI + GICR_ICFGR0,
                                     SGI + GICR_ICFGR1,
                                     SGI + GICD_IGRPMODR,
                                     BOARD_GICR_STRIDE - 4u};
    /* Mostly the board's frames and the first beyond them; sometimes any frame of the region. */
    uint64_t frame = below(5) == 0 ? below(HYP_MAX_CPUS) : below(ncpus < HYP_MAX_CPUS ? ncpus + 1u : ncpus);
    uint64_t off;
    switch (below(8)) {
    case 0:
    case 1:
        off = below(BOARD_GICR_STRIDE);
        break;
    case 2:
    case 3:
    case 4:
    case 5:
        off = spots[below(sizeof(spots) / sizeof(spots[0]))];
        off = (uint64_t)((int64_t)off + (below(3) == 0 ? (int64_t)below(17) - 8 : 0)) % BOARD_GICR_STRIDE;
        break;
    case 6:
        off = (below(BOARD_GICR_STRIDE / PAGE) + 1u) * PAGE - 1u - below(8); /* straddles a page end */
        break;
    default:
        return GICR_REGION - 1u - below(16); /* the end of the region */
    }
    return frame * BOARD_GICR_STRIDE + off;
}

/* ------------------------------------------------------------------------------------------------ */
/* The emulated UART. */

static struct vuart *uart;
static char expect_rx[2 * VUART_RX_SIZE];
static unsigned rx_in, rx_out; /* characters the model accepted / read back since the last reset */
static char out_model[1 << 16], out_seen[1 << 16];
static size_t out_model_len, out_seen_len;
static unsigned tx_pending;

/* The UART model's line sink (conmux.c's part_line in the hypervisor): the console as a capture. */
static bool capture_line(void *ctx, const char *s, size_t n, bool complete)
{
    (void)ctx;
    if (out_seen_len + n + 1u > sizeof(out_seen)) {
        fail("console capture overflow");
    }
    memcpy(out_seen + out_seen_len, s, n);
    out_seen_len += n;
    if (complete) {
        out_seen[out_seen_len++] = '\n';
    }
    return true;
}

/* Register widths (PL011 r1p5, DDI 0183): IBRD 16, FBRD 6, LCR_H 8, CR 16, IFLS 6, IMSC 11, DMACR 3. */
static const struct {
    uint64_t off;
    size_t field;
    uint32_t width;
} uart_regs[] = {
    {PL011_IBRD, offsetof(struct vuart, ibrd), 0xffffu}, {PL011_FBRD, offsetof(struct vuart, fbrd), 0x3fu},
    {PL011_LCR_H, offsetof(struct vuart, lcrh), 0xffu},  {PL011_CR, offsetof(struct vuart, cr), 0xffffu},
    {PL011_IFLS, offsetof(struct vuart, ifls), 0x3fu},   {PL011_IMSC, offsetof(struct vuart, imsc), 0x7ffu},
    {PL011_DMACR, offsetof(struct vuart, dmacr), 0x7u},
};
#define NREGS (sizeof(uart_regs) / sizeof(uart_regs[0]))
static uint32_t reg_model[NREGS];

static unsigned uart_reg_index(uint64_t off)
{
    for (unsigned i = 0; i < NREGS; i++) {
        if (uart_regs[i].off == off) {
            return i;
        }
    }
    abort();
}

static uint32_t *uart_field(unsigned i)
{
    return (uint32_t *)((uint8_t *)uart + uart_regs[i].field);
}

static void uart_reset_model(void)
{
    vuart_reset(uart);
    for (unsigned i = 0; i < NREGS; i++) {
        reg_model[i] = *uart_field(i);
    }
    rx_in = rx_out = 0; /* a reset drops pending input */
}

/* Drains the transmit ring, then checks the console got what was written, in order, and forgets it
 * (an unfinished line stays in the UART model until a newline or a periodic drain after a silent period). */
static void drain(enum vuart_drain_mode mode)
{
    (void)vuart_drain(uart, mode, capture_line, NULL, UINT32_MAX);
    tx_pending = 0;
    if (out_seen_len > out_model_len || memcmp(out_seen, out_model, out_seen_len) != 0) {
        fail("UART output differs from what was written (%zu characters seen, %zu written)", out_seen_len,
             out_model_len);
    }
    memmove(out_model, out_model + out_seen_len, out_model_len - out_seen_len);
    out_model_len -= out_seen_len;
    out_seen_len = 0;
}

/* The model of one UART access (the policy in vuart.c's header): naturally aligned 1, 2 or 4 bytes at
 * the start of a register word reach that register's low bytes (a write replaces them, the rest is kept,
 * the register's width applies); every other access reads as zero and is ignored. */
static void uart_access(uint64_t off, unsigned size, bool write, uint64_t wval)
{
    static const uint8_t id[] = {0x11, 0x10, 0x34, 0x00, 0x0d, 0xf0, 0x05, 0xb1};
    snprintf(cur.what, sizeof(cur.what), "UART %s of %u bytes at offset 0x%llx value 0x%llx",
             write ? "write" : "read", size, (unsigned long long)off, (unsigned long long)wval);
    uint64_t m = size_mask(size);
    uint64_t expect = 0;
    bool rx_empty = rx_in == rx_out;
    if (off % 4u == 0 && size <= 4) {
        for (unsigned i = 0; i < NREGS; i++) {
            if (uart_regs[i].off == off) {
                if (write) {
                    reg_model[i] = (uint32_t)(((reg_model[i] & ~m) | (wval & m)) & uart_regs[i].width);
                } else {
                    expect = reg_model[i] & m;
                }
            }
        }
        uint32_t ris = PL011_INT_TX | (rx_empty ? 0u : PL011_INT_RX | PL011_INT_RT);
        uint32_t imsc = reg_model[uart_reg_index(PL011_IMSC)];
        if (!write && off == PL011_FR) {
            expect = (PL011_FR_TXFE | (rx_empty ? PL011_FR_RXFE : 0u)) & m;
        } else if (!write && off == PL011_RIS) {
            expect = ris & m;
        } else if (!write && off == PL011_MIS) {
            expect = ris & imsc & m;
        } else if (!write && off >= PL011_PERIPHID0 && off < PL011_PERIPHID0 + 32u) {
            expect = id[(off - PL011_PERIPHID0) / 4u] & m;
        } else if (off == PL011_DR && write) {
            if (tx_pending < VUART_TX_SIZE) {
                char c = (char)(wval & 0xffu);
                tx_pending++;
                if (c != '\r') {
                    out_model[out_model_len++] = c;
                }
            }
        } else if (off == PL011_DR && !rx_empty) {
            expect = (uint8_t)expect_rx[rx_out++ % sizeof(expect_rx)] & m;
        }
    }
    uint64_t val = write ? wval : 0xdeadbeefcafef00dull;
    if (!vuart_access(uart, off, write, &val, size)) {
        fail("UART access refused");
    }
    if (!write && size < 8 && (val >> (8u * size)) != 0) {
        fail("a read of %u bytes returned 0x%llx: bits above %u", size, (unsigned long long)val, 8u * size);
    }
    if (!write && val != expect) {
        fail("UART read returned 0x%llx, model 0x%llx", (unsigned long long)val, (unsigned long long)expect);
    }
    for (unsigned i = 0; i < NREGS; i++) {
        uint32_t r = *uart_field(i);
        if ((r & ~uart_regs[i].width) != 0) {
            fail("UART register at 0x%llx holds 0x%x, beyond its width 0x%x",
                 (unsigned long long)uart_regs[i].off, r, uart_regs[i].width);
        }
        if (r != reg_model[i]) {
            fail("UART register at 0x%llx holds 0x%x, model 0x%x", (unsigned long long)uart_regs[i].off, r,
                 reg_model[i]);
        }
    }
    if (out_model_len > sizeof(out_model) - 8u) {
        drain(VUART_DRAIN_LINES);
    }
}

static void uart_step(void)
{
    static const uint64_t spots[] = {PL011_DR,    PL011_RSR,   PL011_FR,   PL011_ILPR, PL011_IBRD, PL011_FBRD,
                                     PL011_LCR_H, PL011_CR,    PL011_IFLS, PL011_IMSC, PL011_RIS,  PL011_MIS,
                                     PL011_ICR,   PL011_DMACR, 0xfe0,      0xffc,      0xffe};
    switch (below(10)) {
    case 0:
    case 1: { /* input arrives (the console CPU's side), sometimes more than the ring holds */
        unsigned n = 1u + (unsigned)below(below(8) == 0 ? 2u * VUART_RX_SIZE : 8u);
        for (unsigned i = 0; i < n; i++) {
            char c = (char)rnd();
            snprintf(cur.what, sizeof(cur.what), "UART receives 0x%02x (%u waiting)", (uint8_t)c,
                     rx_in - rx_out);
            bool room = rx_in - rx_out < VUART_RX_SIZE;
            if (vuart_rx(uart, c) != room) {
                fail("vuart_rx %s a character with %u waiting", room ? "refused" : "accepted",
                     rx_in - rx_out);
            }
            if (room) {
                expect_rx[rx_in++ % sizeof(expect_rx)] = c;
                rx_chars++;
            }
        }
        break;
    }
    case 2: { /* the guest empties its receive FIFO the way a driver does */
        unsigned n = (unsigned)below(64);
        for (unsigned i = 0; i < n; i++) {
            uart_access(PL011_FR, 4, false, 0);
            uart_access(PL011_DR, 4, false, 0);
        }
        break;
    }
    case 3:
        if (below(64) == 0) {
            snprintf(cur.what, sizeof(cur.what), "UART drain");
            drain(VUART_DRAIN_LINES);
        } else if (below(256) == 0) {
            snprintf(cur.what, sizeof(cur.what), "UART reset");
            uart_reset_model();
        }
        break;
    default: {
        uint64_t off = below(2) ? spots[below(sizeof(spots) / sizeof(spots[0]))] : below(BOARD_UART_SIZE);
        if (below(4) == 0) {
            off = (off + below(8)) % BOARD_UART_SIZE;
        }
        uart_access(off, pick_size(), below(2) != 0, below(3) == 0 ? (uint64_t)'\n' : pick_val());
        break;
    }
    }
}

static void uart_finish(void)
{
    snprintf(cur.what, sizeof(cur.what), "UART drain at the end");
    drain(VUART_DRAIN_LINES);
    drain(VUART_DRAIN_TICK); /* output came since the last tick: an unfinished line stays */
    drain(VUART_DRAIN_TICK); /* a silent period: it is shown */
    if (out_model_len != 0) {
        fail("UART: %zu written characters never reached the console", out_model_len);
    }
}

/* ------------------------------------------------------------------------------------------------ */

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Every offset, size and direction, as both partitions (over the redistributor: the board's frames and
 * the first one beyond them). */
static uint64_t sweep(struct region *r, uint64_t n)
{
    cur.phase = "sweep";
    uint64_t end = r == &gicd ? r->size : (ncpus < HYP_MAX_CPUS ? ncpus + 1u : ncpus) * BOARD_GICR_STRIDE;
    for (unsigned size = 1; size <= 8; size *= 2) {
        for (uint64_t off = 0; off < end; off++) {
            for (unsigned k = 0; k < 4; k++, n++) {
                cur.iter = n;
                gic_access(r, k & 1u ? pb : pa, off, size, (k & 2u) != 0, pick_val());
            }
        }
        refill(r);
    }
    return n;
}

int main(int argc, char **argv)
{
    double seconds = 1.0;
    uint64_t iterations = UINT64_MAX;
    bool do_sweep = false;
    prog = argv[0];
    seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) {
            seed = strtoull(argv[++i], NULL, 0);
        } else if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) {
            seconds = strtod(argv[++i], NULL);
        } else if (strcmp(argv[i], "--iterations") == 0 && i + 1 < argc) {
            iterations = strtoull(argv[++i], NULL, 0);
            seconds = 1e9; /* a replay runs exactly that many */
        } else if (strcmp(argv[i], "--sweep") == 0) {
            do_sweep = true;
        } else if (strcmp(argv[i], "--isolation-only") == 0) {
            isolation_only = true;
        } else {
            fprintf(stderr,
                    "usage: %s [--seed N] [--seconds S] [--iterations N] [--sweep] [--isolation-only]\n",
                    prog);
            return 2;
        }
    }
    rng = seed;
    cur.phase = "setup";
    print_case_on_sanitizer_report();
    setup_system(2u + (unsigned)below(3)); /* 2..4 CPUs: the guard pages start at a different frame */
    map_regions();
    refill(&gicd);
    refill(&gicr);
    uart = calloc(1, sizeof(*uart));
    if (uart == NULL) {
        return 2;
    }
    uart_reset_model();
    printf("fuzz_hyp_mmio: seed 0x%llx, %u CPUs (A on 0x%llx, B on 0x%llx)\n", (unsigned long long)seed,
           ncpus, (unsigned long long)pa->cpu_mask, (unsigned long long)pb->cpu_mask);
    fflush(stdout);
    double sweep_start = now();
    uint64_t swept = 0;
    if (do_sweep) {
        swept = sweep(&gicr, sweep(&gicd, 0));
    }
    double start = now(); /* --seconds counts from here: the sweep is a fixed amount of work */
    cur.phase = "random";
    uint64_t n = 0, counts[3] = {0, 0, 0};
    for (; n < iterations; n++) {
        if ((n & 255u) == 0 && now() - start > seconds) {
            break;
        }
        cur.iter = n;
        if (n % 8192u == 8191u) {
            refill(&gicd);
            refill(&gicr);
        }
        uint64_t what = below(3);
        counts[what]++;
        const struct partition *p = below(2) ? pa : pb;
        bool hostile = below(2) != 0; /* else a driver's access to a register */
        unsigned size = pick_size();
        if (what == 0) {
            uint64_t off = hostile ? pick_gicd_off() : pick_gicd_register(p, &size);
            gic_access(&gicd, p, off, size, below(2) != 0, pick_val());
        } else if (what == 1) {
            uint64_t off = hostile ? pick_gicr_off() : pick_gicr_register(p, &size);
            gic_access(&gicr, p, off, size, below(2) != 0, pick_val());
        } else {
            uart_step();
        }
    }
    cur.phase = "end";
    uart_finish();
    printf("fuzz_hyp_mmio: %llu swept (in %.1f s) + %llu random steps (in %.1f s; GICD %llu, GICR %llu, UART "
           "%llu; %llu effective writes, %llu non-zero reads, %llu characters received): no failure\n",
           (unsigned long long)swept, start - sweep_start, (unsigned long long)n, now() - start,
           (unsigned long long)counts[0], (unsigned long long)counts[1], (unsigned long long)counts[2],
           (unsigned long long)effective_writes, (unsigned long long)nonzero_reads,
           (unsigned long long)rx_chars);
    return 0;
}
