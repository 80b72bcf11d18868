/*
 * DMA isolation through the board's IOMMU (hyp/iommu.h): one translation context per partition with
 * streams, mapping its RAM and nothing else; the IOMMU's fault records reported with a rate limit (a
 * partition that makes its device fault in a loop must not flood the console that every partition
 * shares).
 */
#include "hyp/iommu.h"

#include "board.h"
#include "drivers/smmuv3.h"
#include "hyp/partition.h"
#include "hyp/printf.h"

/* Fault reports per second before the rest are only counted (and the count reported). */
#define IOMMU_REPORTS_PER_S 10u

static bool active;
static unsigned polls, reported, suppressed;

static void check(const char *err, const char *what)
{
    if (err != NULL) {
        hyp_panic("SMMU at 0x%lx: %s: %s", (unsigned long)BOARD_SMMU_BASE, what, err);
    }
}

void iommu_setup(void)
{
    bool wanted = false;
    for (unsigned i = 0; i < hyp_nparts; i++) {
        for (unsigned k = 0; k < HYP_MAX_STREAMS; k++) {
            wanted |= hyp_part[i].stream[k].count != 0;
        }
    }
    if (!wanted) {
        return;
    }
    _Static_assert(HYP_MAX_PARTITIONS <= SMMUV3_MAX_CONTEXTS, "one SMMU context per partition");
    /* A partition that could reach the SMMU's registers could undo all of this (the tools never assign
     * them; a blob made otherwise is refused here). */
    for (unsigned i = 0; i < hyp_nparts; i++) {
        for (unsigned d = 0; d < hyp_part[i].ndev; d++) {
            const struct mem_range *r = &hyp_part[i].dev[d];
            if (r->pa < BOARD_SMMU_BASE + BOARD_SMMU_SIZE && BOARD_SMMU_BASE < r->pa + r->size) {
                hyp_panic("partition %s: device range PA 0x%lx+0x%lx covers the SMMU's registers",
                          hyp_part[i].name, (unsigned long)r->pa, (unsigned long)r->size);
            }
        }
    }
    check(smmuv3_init(BOARD_SMMU_BASE), "cannot be used");
    for (unsigned i = 0; i < hyp_nparts; i++) {
        struct partition *p = &hyp_part[i];
        bool ctx = false;
        for (unsigned k = 0; k < HYP_MAX_STREAMS; k++) {
            if (p->stream[k].count == 0) {
                continue;
            }
            if (!ctx) {
                check(smmuv3_context(i, p->ram_ipa, p->ram_pa, p->ram_size), p->name);
                ctx = true;
            }
            check(smmuv3_attach(i, p->stream[k].first, p->stream[k].count), p->name);
            hyp_printf("rtmux: SMMU: DMA of streams 0x%x..0x%x reaches partition %s's RAM only\n",
                       p->stream[k].first, p->stream[k].first + p->stream[k].count - 1u, p->name);
        }
    }
    check(smmuv3_enable(), "enabling translation");
    active = true;
}

bool iommu_active(void)
{
    return active;
}

static const char *owner_name(uint32_t sid)
{
    for (unsigned i = 0; i < hyp_nparts; i++) {
        for (unsigned k = 0; k < HYP_MAX_STREAMS; k++) {
            const struct partition *p = &hyp_part[i];
            if (sid >= p->stream[k].first && sid - p->stream[k].first < p->stream[k].count) {
                return p->name;
            }
        }
    }
    return "no partition";
}

void iommu_poll(unsigned hz)
{
    if (!active) {
        return;
    }
    if (++polls >= hz) {
        polls = 0;
        if (suppressed != 0) {
            hyp_printf("rtmux: SMMU: %u more DMA faults in the last second not shown\n", suppressed);
        }
        reported = suppressed = 0;
    }
    struct smmuv3_event e;
    while (smmuv3_next_event(&e)) {
        if (reported >= IOMMU_REPORTS_PER_S) {
            suppressed++;
            continue;
        }
        reported++;
        if (e.has_addr) {
            hyp_printf("rtmux: SMMU: DMA %s 0x%lx by stream 0x%04x (%s) refused: %s\n",
                       e.read ? "read from" : "write to", (unsigned long)e.addr, e.sid, owner_name(e.sid),
                       smmuv3_event_name(e.type));
        } else {
            hyp_printf("rtmux: SMMU: DMA by stream 0x%04x (%s) refused: %s\n", e.sid, owner_name(e.sid),
                       smmuv3_event_name(e.type));
        }
    }
    uint32_t gerror = smmuv3_global_errors();
    if (gerror != 0 && reported < IOMMU_REPORTS_PER_S) {
        reported++;
        hyp_printf("rtmux: SMMU: global error 0x%x (SMMU_GERROR; e.g. 0x4: fault records lost)\n", gerror);
    }
}
