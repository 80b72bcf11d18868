/*
 * Arm SMMUv3 driver (drivers/smmuv3.h): stage-1 contexts that map one partition's RAM each, a two-level
 * stream table, the command queue at boot and the event queue afterwards. Every structure lives in the
 * hypervisor's memory, which no partition maps; the SMMU's registers are mapped by no partition either.
 *
 * Invariants:
 * - translation is on (SMMUEN) before any partition runs, and the tables never change afterwards;
 * - a stream ID no partition owns has no valid stream table entry (L1 Span 0, or STE.V = 0): its
 *   transactions are aborted and recorded (C_BAD_STREAMID / C_BAD_STE);
 * - a context's tables hold block entries for its partition's RAM only, tagged with the context's own
 *   ASID (nG): an address outside that RAM is a translation fault, recorded (CD.R) and aborted (CD.A).
 */
#include "drivers/smmuv3.h"

#include <stddef.h>

#include "arm64/pgtable.h"
#include "arm64/smmuv3.h"

#define SID_BITS_MAX 16u /* the stream table covers at most 2^16 stream IDs (PCI requester IDs) */
#define SPLIT        8u  /* each level-2 table holds 2^SPLIT STEs */
#define L2_STES      (1u << SPLIT)
#define L1_ENTRIES   (1u << (SID_BITS_MAX - SPLIT))
#define L2_TABLES    6u /* one shared full table per context in use, the rest for mixed groups */
#define PT_PAGES     16u
#define INPUT_BITS   39u /* device addresses: the IPA space of stage 2 (level-1 walks, T0SZ = 25) */
#define CMDQ_LOG2    5u  /* 32 commands */
#define EVTQ_LOG2    7u  /* 128 fault records */
#define POLL_LIMIT   (1u << 22)
#define MAIR_WB      0xffu /* attribute 0: normal memory, inner and outer write-back, allocating */
#define RAM_ALIGN    L2_BLOCK_SIZE

/* The SMMU walks these: they are never written after smmuv3_enable. */
static uint64_t l1_table[L1_ENTRIES] __attribute__((aligned(PAGE_SIZE)));
static uint64_t l2_pool[L2_TABLES][L2_STES * SMMU_STE_DWORDS] __attribute__((aligned(L2_STES * 64u)));
static uint64_t cd_table[SMMUV3_MAX_CONTEXTS][SMMU_CD_DWORDS] __attribute__((aligned(64)));
static uint64_t pt_pool[PT_PAGES][PT_ENTRIES] __attribute__((aligned(PAGE_SIZE)));
static uint64_t cmdq[(1u << CMDQ_LOG2) * SMMU_CMD_DWORDS] __attribute__((aligned(PAGE_SIZE)));
static volatile uint64_t evtq[(1u << EVTQ_LOG2) * SMMU_EVT_DWORDS] __attribute__((aligned(PAGE_SIZE)));

/* Every memory access before it is complete for every observer, the SMMU included: its table walks and
 * queue reads are not ordered with the CPU's stores by anything else. */
static inline void barrier_all(void)
{
    __asm__ volatile("dsb sy" : : : "memory");
}

static struct {
    uintptr_t base;
    unsigned sid_bits; /* stream IDs the tables cover: min(SMMU_IDR1.SIDSIZE, SID_BITS_MAX) */
    unsigned ips;      /* CD.IPS: the output address size, as SMMU_IDR5.OAS encodes it */
    bool enabled;
    uint32_t cmd_prod; /* next command slot: index and wrap bit */
    uint32_t evt_cons; /* next fault record to read: index and wrap bit */
    uint64_t *ttb[SMMUV3_MAX_CONTEXTS];
    uint64_t *full[SMMUV3_MAX_CONTEXTS]; /* a level-2 table whose every STE uses the context */
    struct {
        uint32_t first, count;
        unsigned ctx;
    } range[SMMUV3_MAX_RANGES];
    unsigned nranges, pt_used, l2_used;
} smmu;

static uint32_t rd32(uint32_t off)
{
    return *(volatile uint32_t *)(smmu.base + off);
}

static void wr32(uint32_t off, uint32_t v)
{
    *(volatile uint32_t *)(smmu.base + off) = v;
}

static void wr64(uint32_t off, uint64_t v)
{
    *(volatile uint64_t *)(smmu.base + off) = v;
}

static uint64_t pa_of(const void *p)
{
    return (uint64_t)(uintptr_t)p; /* the hypervisor's memory is identity-mapped */
}

static bool wait32(uint32_t off, uint32_t mask, uint32_t want)
{
    for (uint32_t i = 0; i < POLL_LIMIT; i++) {
        if ((rd32(off) & mask) == want) {
            return true;
        }
    }
    return false;
}

static const char *write_cr0(uint32_t v)
{
    wr32(SMMU_CR0, v);
    return wait32(SMMU_CR0ACK, 0xffffffffu, v) ? NULL : "SMMU_CR0ACK did not follow SMMU_CR0";
}

const char *smmuv3_init(uintptr_t base)
{
    smmu.base = base;
    uint32_t idr0 = rd32(SMMU_IDR0), idr1 = rd32(SMMU_IDR1), idr5 = rd32(SMMU_IDR5);
    if (!(idr0 & SMMU_IDR0_S1P)) {
        return "no stage-1 translation (SMMU_IDR0.S1P = 0)";
    }
    if (!(((idr0 >> SMMU_IDR0_TTF_SHIFT) & SMMU_IDR0_TTF_MASK) & SMMU_IDR0_TTF_AARCH64)) {
        return "no AArch64 translation tables (SMMU_IDR0.TTF)";
    }
    if (!(idr0 & SMMU_IDR0_COHACC)) {
        return "its table walks are not coherent with the CPUs' caches (SMMU_IDR0.COHACC = 0)";
    }
    if (((idr0 >> SMMU_IDR0_ST_LVL_SHIFT) & SMMU_IDR0_ST_LVL_MASK) != SMMU_IDR0_ST_LVL_2LVL) {
        return "no two-level stream table (SMMU_IDR0.ST_LEVEL)";
    }
    if (!(idr5 & SMMU_IDR5_GRAN4K)) {
        return "no 4 KiB translation granule (SMMU_IDR5.GRAN4K)";
    }
    smmu.sid_bits = idr1 & SMMU_IDR1_SIDSIZE_MASK;
    if (smmu.sid_bits > SID_BITS_MAX) {
        smmu.sid_bits = SID_BITS_MAX;
    }
    if (smmu.sid_bits < SPLIT) {
        return "fewer than 8 stream ID bits (SMMU_IDR1.SIDSIZE)";
    }
    smmu.ips = idr5 & SMMU_IDR5_OAS_MASK;
    if (smmu.ips > 5u) {
        smmu.ips = 5u; /* 48 bits: the most the 4 KiB-granule descriptors hold without LPA */
    }
    /* Translation off; transactions are aborted, not passed through, until it is on again. */
    const char *err = write_cr0(0);
    if (err != NULL) {
        return err;
    }
    wr32(SMMU_GBPA, SMMU_GBPA_ABORT | SMMU_GBPA_UPDATE);
    if (!wait32(SMMU_GBPA, SMMU_GBPA_UPDATE, 0)) {
        return "SMMU_GBPA.UPDATE did not clear";
    }
    wr32(SMMU_IRQ_CTRL, 0); /* faults are polled (smmuv3_next_event) */
    uint32_t wb_inner = SMMU_CACHE_WB << SMMU_CR1_QUEUE_IC_SHIFT | SMMU_CACHE_WB << SMMU_CR1_QUEUE_OC_SHIFT |
                        SMMU_SH_INNER << SMMU_CR1_QUEUE_SH_SHIFT | SMMU_CACHE_WB << SMMU_CR1_TABLE_IC_SHIFT |
                        SMMU_CACHE_WB << SMMU_CR1_TABLE_OC_SHIFT | SMMU_SH_INNER << SMMU_CR1_TABLE_SH_SHIFT;
    wr32(SMMU_CR1, wb_inner);
    wr32(SMMU_CR2, SMMU_CR2_RECINVSID | SMMU_CR2_PTM);
    wr64(SMMU_CMDQ_BASE, SMMU_BASE_RA | (pa_of(cmdq) & SMMU_BASE_ADDR_MASK) | CMDQ_LOG2);
    wr32(SMMU_CMDQ_PROD, 0);
    wr32(SMMU_CMDQ_CONS, 0);
    wr64(SMMU_EVENTQ_BASE, SMMU_BASE_WA | (pa_of((const void *)evtq) & SMMU_BASE_ADDR_MASK) | EVTQ_LOG2);
    wr32(SMMU_EVENTQ_PROD, 0);
    wr32(SMMU_EVENTQ_CONS, 0);
    wr32(SMMU_GERRORN, rd32(SMMU_GERROR)); /* nothing from before this boot is pending */
    return NULL;
}

static uint64_t *pt_alloc(void)
{
    return smmu.pt_used < PT_PAGES ? pt_pool[smmu.pt_used++] : NULL; /* BSS: zero, no valid entry */
}

/* A block entry: normal write-back memory, readable and writable by any transaction, never executable,
 * tagged with the context's ASID. */
static uint64_t block(uint64_t pa)
{
    return pa | PTE_VALID | PTE_S1_ATTR(0) | SMMU_PTE_AP_RW_ANY | PTE_SH_INNER | PTE_AF | SMMU_PTE_NG |
           PTE_PXN | PTE_XN;
}

const char *smmuv3_context(unsigned ctx, uint64_t ipa, uint64_t pa, uint64_t size)
{
    if (ctx >= SMMUV3_MAX_CONTEXTS || smmu.ttb[ctx] != NULL || smmu.enabled) {
        return "context number out of range, set twice, or set after the SMMU was enabled";
    }
    if (((ipa | pa | size) & (RAM_ALIGN - 1u)) != 0 || size == 0 || ipa + size > (1ull << INPUT_BITS) ||
        ipa + size < ipa || pa + size < pa) {
        return "RAM not 2 MiB aligned, empty, or beyond the 39-bit device address space";
    }
    uint64_t *l1 = pt_alloc();
    if (l1 == NULL) {
        return "translation table pool exhausted";
    }
    while (size > 0) {
        uint64_t *l1e = &l1[(ipa >> L1_BLOCK_SHIFT) & PT_INDEX_MASK];
        if (((ipa | pa) & (L1_BLOCK_SIZE - 1u)) == 0 && size >= L1_BLOCK_SIZE) {
            *l1e = block(pa);
            ipa += L1_BLOCK_SIZE, pa += L1_BLOCK_SIZE, size -= L1_BLOCK_SIZE;
            continue;
        }
        if (!(*l1e & PTE_VALID)) {
            uint64_t *t = pt_alloc();
            if (t == NULL) {
                return "translation table pool exhausted";
            }
            *l1e = pa_of(t) | PTE_VALID | PTE_TABLE;
        }
        uint64_t *l2 = (uint64_t *)(uintptr_t)(*l1e & PTE_ADDR_MASK);
        l2[(ipa >> L2_BLOCK_SHIFT) & PT_INDEX_MASK] = block(pa);
        ipa += L2_BLOCK_SIZE, pa += L2_BLOCK_SIZE, size -= L2_BLOCK_SIZE;
    }
    uint64_t *cd = cd_table[ctx];
    cd[0] = (uint64_t)(64u - INPUT_BITS) << SMMU_CD0_T0SZ_SHIFT | SMMU_CD0_TG0_4K |
            (uint64_t)SMMU_CACHE_WB << SMMU_CD0_IR0_SHIFT | (uint64_t)SMMU_CACHE_WB << SMMU_CD0_OR0_SHIFT |
            (uint64_t)SMMU_SH_INNER << SMMU_CD0_SH0_SHIFT | SMMU_CD0_TG1_4K | SMMU_CD0_EPD1 | SMMU_CD0_V |
            (uint64_t)smmu.ips << SMMU_CD0_IPS_SHIFT | SMMU_CD0_AA64 | SMMU_CD0_R | SMMU_CD0_A |
            SMMU_CD0_ASET | (uint64_t)(ctx + 1u) << SMMU_CD0_ASID_SHIFT;
    cd[1] = pa_of(l1) & SMMU_CD1_TTB0_MASK;
    cd[SMMU_CD3_MAIR] = MAIR_WB;
    smmu.ttb[ctx] = l1;
    return NULL;
}

const char *smmuv3_attach(unsigned ctx, uint32_t first, uint32_t count)
{
    if (ctx >= SMMUV3_MAX_CONTEXTS || smmu.ttb[ctx] == NULL || smmu.enabled) {
        return "no such context, or the SMMU is already enabled";
    }
    if (count == 0 || (uint64_t)first + count > (1ull << smmu.sid_bits)) {
        return "stream range empty or beyond the SMMU's stream IDs";
    }
    if (smmu.nranges == SMMUV3_MAX_RANGES) {
        return "too many stream ranges";
    }
    for (unsigned i = 0; i < smmu.nranges; i++) {
        if (first < smmu.range[i].first + smmu.range[i].count && smmu.range[i].first < first + count) {
            return "stream range overlaps one already attached";
        }
    }
    smmu.range[smmu.nranges].first = first;
    smmu.range[smmu.nranges].count = count;
    smmu.range[smmu.nranges].ctx = ctx;
    smmu.nranges++;
    return NULL;
}

/* The context that owns stream sid, or -1. */
static int owner(uint32_t sid)
{
    for (unsigned i = 0; i < smmu.nranges; i++) {
        if (sid >= smmu.range[i].first && sid - smmu.range[i].first < smmu.range[i].count) {
            return (int)smmu.range[i].ctx;
        }
    }
    return -1;
}

/* The STE of a stream owned by context ctx: stage-1 translation through its one context descriptor. */
static void write_ste(uint64_t *ste, unsigned ctx)
{
    ste[1] = (uint64_t)SMMU_CACHE_WB << SMMU_STE1_S1CIR_SHIFT |
             (uint64_t)SMMU_CACHE_WB << SMMU_STE1_S1COR_SHIFT |
             (uint64_t)SMMU_SH_INNER << SMMU_STE1_S1CSH_SHIFT;
    ste[2] = (ctx + 1u) & SMMU_STE2_S2VMID_MASK;
    ste[0] = (pa_of(cd_table[ctx]) & SMMU_STE0_S1CTXPTR_MASK) | SMMU_STE0_CFG_S1_TRANS | SMMU_STE0_V;
}

static uint64_t *l2_alloc(void)
{
    return smmu.l2_used < L2_TABLES ? l2_pool[smmu.l2_used++] : NULL;
}

/* Fills the level-1 descriptor of stream group g (SIDs g << SPLIT ...). */
static const char *build_group(unsigned g)
{
    uint32_t sid0 = g << SPLIT;
    int first = owner(sid0);
    bool uniform = true;
    for (uint32_t i = 1; i < L2_STES && uniform; i++) {
        uniform = owner(sid0 + i) == first;
    }
    if (uniform && first < 0) {
        l1_table[g] = 0; /* Span 0: every stream of the group is aborted (C_BAD_STREAMID) */
        return NULL;
    }
    uint64_t *l2;
    if (uniform) {
        if (smmu.full[first] == NULL) {
            smmu.full[first] = l2_alloc();
            if (smmu.full[first] == NULL) {
                return "stream table pool exhausted";
            }
            for (uint32_t i = 0; i < L2_STES; i++) {
                write_ste(&smmu.full[first][i * SMMU_STE_DWORDS], (unsigned)first);
            }
        }
        l2 = smmu.full[first];
    } else {
        l2 = l2_alloc();
        if (l2 == NULL) {
            return "stream table pool exhausted (stream ranges share too many groups of 256)";
        }
        for (uint32_t i = 0; i < L2_STES; i++) {
            int ctx = owner(sid0 + i);
            if (ctx >= 0) {
                write_ste(&l2[i * SMMU_STE_DWORDS], (unsigned)ctx); /* the others stay invalid (zero) */
            }
        }
    }
    l1_table[g] = (pa_of(l2) & SMMU_L1STD_L2PTR_MASK) | (SPLIT + 1u);
    return NULL;
}

static const char *command(uint64_t w0, uint64_t w1)
{
    uint32_t n = 1u << CMDQ_LOG2;
    uint64_t *slot = &cmdq[(smmu.cmd_prod & (n - 1u)) * SMMU_CMD_DWORDS];
    slot[0] = w0;
    slot[1] = w1;
    smmu.cmd_prod = (smmu.cmd_prod + 1u) & (2u * n - 1u);
    barrier_all(); /* the entry is in memory before the SMMU is told about it */
    wr32(SMMU_CMDQ_PROD, smmu.cmd_prod);
    for (uint32_t i = 0; i < POLL_LIMIT; i++) {
        uint32_t cons = rd32(SMMU_CMDQ_CONS);
        if (SMMU_CMDQ_CONS_ERR(cons) != 0 ||
            ((rd32(SMMU_GERROR) ^ rd32(SMMU_GERRORN)) & SMMU_GERROR_CMDQ_ERR)) {
            return "the SMMU refused a command (SMMU_GERROR.CMDQ_ERR)";
        }
        if ((cons & (2u * n - 1u)) == smmu.cmd_prod) {
            return NULL;
        }
    }
    return "the SMMU did not consume its command queue";
}

const char *smmuv3_enable(void)
{
    if (smmu.enabled) {
        return "already enabled";
    }
    for (unsigned g = 0; g < (1u << (smmu.sid_bits - SPLIT)); g++) {
        const char *err = build_group(g);
        if (err != NULL) {
            return err;
        }
    }
    barrier_all(); /* tables and descriptors are in memory before the SMMU may walk them */
    wr64(SMMU_STRTAB_BASE, SMMU_BASE_RA | (pa_of(l1_table) & SMMU_BASE_ADDR_MASK));
    wr32(SMMU_STRTAB_BASE_CFG,
         SMMU_STRTAB_CFG_FMT_2LVL | SPLIT << SMMU_STRTAB_CFG_SPLIT_SHIFT | smmu.sid_bits);
    const char *err = write_cr0(SMMU_CR0_CMDQEN);
    if (err != NULL) {
        return err;
    }
    /* Nothing cached from before (firmware, an earlier boot) may survive. */
    err = command(SMMU_CMD_CFGI_STE_RANGE, SMMU_CMD_CFGI_ALL_RANGE);
    err = err != NULL ? err : command(SMMU_CMD_TLBI_NSNH_ALL, 0);
    err = err != NULL ? err : command(SMMU_CMD_SYNC, 0);
    err = err != NULL ? err : write_cr0(SMMU_CR0_CMDQEN | SMMU_CR0_EVENTQEN);
    err = err != NULL ? err : write_cr0(SMMU_CR0_CMDQEN | SMMU_CR0_EVENTQEN | SMMU_CR0_SMMUEN);
    smmu.enabled = err == NULL;
    return err;
}

bool smmuv3_next_event(struct smmuv3_event *e)
{
    if (!smmu.enabled) {
        return false;
    }
    uint32_t n = 1u << EVTQ_LOG2, mask = 2u * n - 1u;
    uint32_t prod = rd32(SMMU_EVENTQ_PROD);
    if ((prod & mask) == smmu.evt_cons) {
        return false;
    }
    barrier_all(); /* the record is read after PROD said it is there */
    const volatile uint64_t *rec = &evtq[(smmu.evt_cons & (n - 1u)) * SMMU_EVT_DWORDS];
    uint64_t w0 = rec[0], w1 = rec[1];
    e->type = (uint32_t)(w0 & SMMU_EVT0_TYPE_MASK);
    e->sid = (uint32_t)(w0 >> SMMU_EVT0_SID_SHIFT);
    e->addr = rec[SMMU_EVT_ADDR];
    e->read = (w1 & SMMU_EVT1_RNW) != 0;
    e->has_addr = e->type == SMMU_EVT_F_UUT || e->type == SMMU_EVT_F_TRANSL_FORBIDDEN ||
                  (e->type >= SMMU_EVT_F_WALK_EABT && e->type <= SMMU_EVT_F_PERMISSION);
    smmu.evt_cons = (smmu.evt_cons + 1u) & mask;
    wr32(SMMU_EVENTQ_CONS, smmu.evt_cons | (prod & SMMU_Q_OVF)); /* acknowledges an overflow */
    return true;
}

uint32_t smmuv3_global_errors(void)
{
    if (smmu.base == 0) {
        return 0;
    }
    uint32_t g = rd32(SMMU_GERROR), active = g ^ rd32(SMMU_GERRORN);
    if (active != 0) {
        wr32(SMMU_GERRORN, g);
    }
    return active;
}

const char *smmuv3_event_name(uint32_t type)
{
    switch (type) {
    case SMMU_EVT_F_UUT:
        return "unsupported upstream transaction";
    case SMMU_EVT_C_BAD_STREAMID:
        return "stream ID owned by no partition";
    case SMMU_EVT_F_STE_FETCH:
        return "stream table fetch abort";
    case SMMU_EVT_C_BAD_STE:
        return "stream owned by no partition";
    case SMMU_EVT_F_STREAM_DISABLED:
        return "stream disabled";
    case SMMU_EVT_F_TRANSL_FORBIDDEN:
        return "translation forbidden";
    case SMMU_EVT_C_BAD_SUBSTREAMID:
        return "bad substream ID";
    case SMMU_EVT_F_CD_FETCH:
        return "context descriptor fetch abort";
    case SMMU_EVT_C_BAD_CD:
        return "bad context descriptor";
    case SMMU_EVT_F_WALK_EABT:
        return "table walk abort";
    case SMMU_EVT_F_TRANSLATION:
        return "outside the partition's RAM";
    case SMMU_EVT_F_ADDR_SIZE:
        return "address size fault";
    case SMMU_EVT_F_ACCESS:
        return "access flag fault";
    case SMMU_EVT_F_PERMISSION:
        return "permission fault";
    default:
        return "event";
    }
}
