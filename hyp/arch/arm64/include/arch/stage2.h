/*
 * Stage-2 translation tables (arch/arm64/stage2.c): 4 KiB granule, 39-bit IPA, walks start at level 1.
 */
#ifndef HYP_ARCH_STAGE2_H
#define HYP_ARCH_STAGE2_H

#include <stdbool.h>
#include <stdint.h>

#define S2_IPA_BITS   39u
#define S2_POOL_PAGES 96u /* table pages for every partition together */

/* A new, empty level-1 table. */
uint64_t *s2_new_root(void);
/* Maps [ipa, ipa + size) to pa with the largest blocks alignment allows; device memory is
 * Device-nGnRE and never executable. Mapping over an existing mapping stops the machine. */
void s2_map(uint64_t *root, uint64_t ipa, uint64_t pa, uint64_t size, bool device);
/* VTTBR_EL2 for a table and VMID. */
uint64_t s2_vttbr(const uint64_t *root, unsigned vmid);

#endif /* HYP_ARCH_STAGE2_H */
