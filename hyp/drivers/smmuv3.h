/*
 * The Arm SMMUv3 the hypervisor owns (drivers/smmuv3.c): it confines the DMA of devices passed to a
 * partition to that partition's RAM. No partition ever maps its registers.
 *
 * Stage 1 only (QEMU 7.2 implements no stage 2): one translation context per partition, a context
 * descriptor whose tables map the partition's RAM at its IPAs (what its devices are given as DMA
 * addresses) to the RAM's physical address; everything else faults. A two-level stream table covers
 * every stream ID the SMMU has; a stream no partition owns has no valid entry and is aborted.
 *
 * Use: smmuv3_init, then smmuv3_context and smmuv3_attach for each partition, then smmuv3_enable.
 * Afterwards smmuv3_next_event and smmuv3_global_errors read what the SMMU reports. Nothing here prints:
 * errors are returned as text for the caller to report.
 */
#ifndef HYP_DRIVERS_SMMUV3_H
#define HYP_DRIVERS_SMMUV3_H

#include <stdbool.h>
#include <stdint.h>

#define SMMUV3_MAX_CONTEXTS 4u /* one per partition (HYP_MAX_PARTITIONS) */
#define SMMUV3_MAX_RANGES   8u /* stream ranges attached, all contexts together */

/* One fault the SMMU recorded. */
struct smmuv3_event {
    uint32_t type; /* SMMU_EVT_* (arm64/smmuv3.h) */
    uint32_t sid;  /* stream ID */
    bool has_addr; /* a translation-related fault: addr and read are valid */
    uint64_t addr; /* input (device) address */
    bool read;     /* the access was a read */
};

/* Checks what the SMMU at `base` supports and resets it: translation off, bypass aborted, queues set.
 * Returns NULL or why it cannot be used. */
const char *smmuv3_init(uintptr_t base);
/* Context ctx translates device addresses [ipa, ipa + size) to [pa, pa + size); everything else
 * faults. All three 2 MiB aligned. Returns NULL or the reason it cannot. */
const char *smmuv3_context(unsigned ctx, uint64_t ipa, uint64_t pa, uint64_t size);
/* Streams [first, first + count) use context ctx. Returns NULL or the reason it cannot. */
const char *smmuv3_attach(unsigned ctx, uint32_t first, uint32_t count);
/* Builds the stream table, makes the SMMU forget cached configuration, and turns translation on.
 * Returns NULL or the reason it failed. */
const char *smmuv3_enable(void);
/* Takes the oldest unread fault record; false when there is none. */
bool smmuv3_next_event(struct smmuv3_event *e);
/* Global errors raised since the last call (SMMU_GERROR bits), acknowledged. */
uint32_t smmuv3_global_errors(void);
/* A short name of an event type ("translation fault"). */
const char *smmuv3_event_name(uint32_t type);

#endif /* HYP_DRIVERS_SMMUV3_H */
