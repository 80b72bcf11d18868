/*
 * Static sizes of the hypervisor's tables. Everything is allocated at build time.
 */
#ifndef HYP_LIMITS_H
#define HYP_LIMITS_H

#define HYP_MAX_CPUS       8u /* CPU n has MPIDR Aff0 = n (QEMU virt); one stack and vcpu each */
#define HYP_MAX_PARTITIONS 4u
#define HYP_MAX_DEVICES    8u    /* passed-through MMIO ranges per partition (blob: BLOB_MAX_DEVICES) */
#define HYP_MAX_MMIO       4u    /* emulated MMIO regions per partition: UART, GICD, GICR, + 1 spare */
#define HYP_MAX_INTID      1020u /* INTIDs 1020..1023 are special */
#define HYP_MAX_SEEDS      2u
#define HYP_MAX_STREAMS    2u     /* IOMMU stream ranges per partition (blob: BLOB_MAX_STREAMS) */
#define HYP_MAX_RESTARTS   16u    /* fault restarts remembered per partition (blob: BLOB_MAX_RESTARTS) */
#define HYP_STACK_SIZE     16384u /* per CPU: trap handlers and the 256-byte print buffers */
#define HYP_INTID_WORDS    (HYP_MAX_INTID / 32u + 1u) /* bitmap words covering every INTID */

#endif /* HYP_LIMITS_H */
