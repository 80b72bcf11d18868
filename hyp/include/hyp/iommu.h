/*
 * DMA isolation (core/iommu.c): the board's IOMMU confines the DMA of the devices passed to a partition
 * to that partition's RAM, addressed as the partition sees it (its IPAs). Faults the IOMMU records are
 * reported on the console, a limited number per second.
 */
#ifndef HYP_IOMMU_H
#define HYP_IOMMU_H

#include <stdbool.h>

/* When a partition has IOMMU streams (the blob's stream ranges): programs the IOMMU for every partition
 * and turns translation on. Call after the partitions are set up and before any of them runs. A board
 * whose IOMMU is missing or unfit stops the machine with the reason. */
void iommu_setup(void);
/* True once iommu_setup turned translation on. */
bool iommu_active(void);
/* Reports the faults recorded since the last call; called `hz` times a second on one CPU. */
void iommu_poll(unsigned hz);

#endif /* HYP_IOMMU_H */
