/*
 * Reading the configuration blob (core/config.c; format in hyp/blob.h).
 */
#ifndef HYP_CONFIG_H
#define HYP_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct partition;
struct vbus_config;

/* Board and console settings from the blob. */
struct hyp_config {
    unsigned gic_version;        /* the GIC the tools described (3 or 2); checked against the CPU's */
    unsigned board_cpus;         /* the board's CPUs (as the blob says; not checked against the hardware) */
    uint64_t ram_base, ram_size; /* the board's RAM */
    bool console_tags;
    bool console_focus_view; /* only the focused partition's lines live, the others held */
    bool boot_report;        /* BLOB_FLAG_BOOT_REPORT: el2-entries report at the first console tick */
    uint8_t console_escape;
    unsigned console_focus; /* partition index */
};

/*
 * Checks and reads the blob at `blob` (at most `avail` bytes readable there) into parts[] (at most max),
 * *out and *vbus (the V-Bus: its channels, the device's place; nchan 0 without, as from a 2.1 blob);
 * returns the number of partitions. image_base is the address of the bundle image's first
 * byte and bundle_size its size (the Image header's image_size, which ./rtmux sets to the whole bundle:
 * the hypervisor, the blob, then the partitions' images, found at image_base + bundle_offset). No
 * partition may overlap the bundle, and every image must lie inside it. An absent, damaged, foreign or
 * inconsistent blob stops the machine (hyp_panic) with a message naming the problem: the hypervisor
 * never guesses a partition table.
 */
unsigned config_parse(const uint8_t *blob, size_t avail, uint64_t image_base, uint64_t bundle_size,
                      struct partition *parts, unsigned max, struct hyp_config *out,
                      struct vbus_config *vbus);

#endif /* HYP_CONFIG_H */
