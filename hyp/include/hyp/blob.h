/*
 * The configuration blob: the resolved system configuration that ./rtmux appends to the hypervisor image
 * (tools/rtmux writes it, core/config.c reads it). This header is its one definition; docs and the tools
 * refer here, and tests/unit/python/test_hyp_blob.py runs the hypervisor's parser on blobs the tools make.
 *
 * Little-endian, fixed-size records: a header, then partition_count partition records of
 * partition_size bytes from partitions_offset, then (since 2.2) channel_count V-Bus channel records of
 * channel_size bytes from channels_offset. A reader refuses another major revision and accepts a newer
 * minor one: minor revisions only give meaning to reserved bytes, which are zero before, and may append
 * a table that such bytes locate (a reader that does not know it finds total_size larger than what it
 * reads and refuses the blob rather than run a system without a part it configures).
 * Revision history: 1.0 first; 1.1 added the partition's seed ranges (zero in a 1.0 blob: none); 2.0
 * grew the partition record to 576 bytes for its IOMMU stream ranges (and reserved bytes for later
 * minor revisions); 2.1 added the partition's fault policy (zero in a 2.0 blob: stop, no restart), its
 * shared-memory console ring (zero: none) and the header flags BLOB_FLAG_FIXED_SEEDS and
 * BLOB_FLAG_BOOT_REPORT (zero before: seeds changed at every start, no report at boot); 2.2 added the
 * V-Bus (lib/vbus.h): the channel table (header: channel_count, channel_size, channels_offset; zero in
 * a 2.1 blob: no V-Bus) and each partition's V-Bus place (zero: none); 2.3 added shared-core mode: the
 * partition flag BLOB_PART_SHARED and starved_ms (zero in a 2.2 blob: no CPU shared).
 */
#ifndef HYP_BLOB_H
#define HYP_BLOB_H

#include <stddef.h>
#include <stdint.h>

#include "lib/vbus.h"

#define BLOB_MAGIC             0x43584d52u /* "RMXC" read as a little-endian word */
#define BLOB_VERSION_MAJOR     2u
#define BLOB_VERSION_MINOR     4u
#define BLOB_FLAG_CONSOLE_TAGS 0x1u
/* Measurement only (./rtmux run --seed, ./rtmux bench): the seed ranges keep the bytes the tools wrote
 * at every start, so that a Linux boot repeats exactly under QEMU icount. Never for normal use: every
 * boot then gets the same KASLR offset and random seed. */
#define BLOB_FLAG_FIXED_SEEDS 0x2u
/* Print the el2-entries report once at the drain CPU's first console tick (1 / CONMUX_TICK_HZ after
 * boot), a reference for counting each CPU's entries after its partition's start-up without typing on
 * the console (which would make an icount run depend on the host). */
#define BLOB_FLAG_BOOT_REPORT  0x4u
#define BLOB_FLAG_CONSOLE_VIEW 0x8u /* since 2.1: show the focused partition's output only (conmux.c) */
#define BLOB_NAME_SIZE         16u  /* NUL-padded; at most 15 characters, so always terminated */
#define BLOB_MAX_DEVICES       8u
#define BLOB_MAX_IRQS          32u
#define BLOB_MAX_SEEDS         2u
#define BLOB_MAX_STREAMS       2u
#define BLOB_KIND_RTOS         1u
#define BLOB_KIND_LINUX        2u
/* Since 2.3, an rtos partition's flag: its one CPU is also in a Linux partition's cpu_mask and shared
 * with it (the rtos first; hyp/share.h). Without it, partitions' CPUs never overlap. */
#define BLOB_PART_SHARED   0x1u
#define BLOB_FAULT_STOP    0u /* a fault stops the partition */
#define BLOB_FAULT_RESTART 1u /* a fault restarts it, within its restart rate */
#define BLOB_MAX_RESTARTS  16u
/* The CRC-32 (IEEE 802.3: reflected polynomial 0xEDB88320, initial value and final XOR 0xFFFFFFFF, as
 * zlib computes it) covers total_size bytes with the crc32 field taken as zero. */
#define BLOB_CRC_POLY 0xedb88320u

enum blob_image_slot { BLOB_IMAGE_KERNEL, BLOB_IMAGE_INITRD, BLOB_IMAGE_DTB, BLOB_IMAGES };

struct __attribute__((packed)) blob_header {
    uint32_t magic;
    uint16_t version_major;
    uint16_t version_minor;
    uint32_t header_size; /* sizeof(struct blob_header) */
    uint32_t total_size;  /* header + partition_count * partition_size */
    uint32_t crc32;
    uint32_t flags; /* BLOB_FLAG_*; other bits zero */
    uint32_t partition_count;
    uint32_t partition_size;    /* sizeof(struct blob_partition) */
    uint32_t partitions_offset; /* header_size */
    uint32_t board_cpus;
    uint64_t ram_base; /* PA of the board's RAM */
    uint64_t ram_size;
    uint64_t hyp_base; /* the hypervisor's reserved RAM (starts at ram_base) */
    uint64_t hyp_size;
    uint8_t console_escape; /* the focus-switch key (0x14 = Ctrl-T) */
    uint8_t console_focus;  /* index of the partition that has console input at boot */
    uint16_t gic_version;   /* since 2.4: the board's GIC version, 3 or 2 (0 in older blobs: 3) */
    uint32_t reserved1;
    char board[BLOB_NAME_SIZE];
    uint32_t channel_count;   /* since 2.2: V-Bus channels, 0..VBUS_MAX_CHANNELS */
    uint32_t channel_size;    /* sizeof(struct blob_channel); 0 without channels */
    uint32_t channels_offset; /* partitions_offset + partition_count * partition_size; 0 without */
    uint8_t reserved2[20];
};

/* One image in the bundle: bundle_offset counts from the bundle's first byte (its arm64 Image header);
 * the hypervisor copies it to PA = ram_pa + (load_ipa - ram_ipa). size 0 = absent. */
struct __attribute__((packed)) blob_image {
    uint64_t bundle_offset;
    uint64_t size;
    uint64_t load_ipa;
};

/* MMIO mapped into the partition: whole 4 KiB pages, merged where they touch; for an rtos partition
 * this includes its CPUs' GIC redistributor frames (direct access). */
struct __attribute__((packed)) blob_device {
    uint64_t ipa;
    uint64_t pa;
    uint64_t size;
};

/* Random bytes in the DTB image (a Linux partition's rng-seed and kaslr-seed) that the hypervisor
 * changes at every start of the partition. size 0 = none. */
struct __attribute__((packed)) blob_seed {
    uint32_t offset; /* within the DTB image */
    uint32_t size;
};

/* Stream IDs [first, first + count) at the board's IOMMU (QEMU virt: the SMMUv3 in front of the PCIe
 * host, stream ID = PCI requester ID) whose DMA the hypervisor lets reach this partition's RAM, at the
 * partition's IPAs, and nothing else. count 0 = none. */
struct __attribute__((packed)) blob_stream {
    uint32_t first;
    uint32_t count;
};

/* What a fault of the partition does (hyp/core/lifecycle.c): stop it, or restart it at most
 * max_restarts times within any window_s seconds (one more fault in the window stops it). */
struct __attribute__((packed)) blob_fault {
    uint8_t policy;       /* BLOB_FAULT_* */
    uint8_t max_restarts; /* 1..BLOB_MAX_RESTARTS with BLOB_FAULT_RESTART, else 0 */
    uint16_t reserved;
    uint32_t window_s; /* non-zero with BLOB_FAULT_RESTART */
};

/* A console ring in the partition's RAM (lib/conring.h): CONRING_HEADER_SIZE bytes of header, then
 * size data bytes (a power of two). size 0 = none: the partition writes to its emulated PL011. */
struct __attribute__((packed)) blob_conring {
    uint64_t ipa;
    uint32_t size;
    uint32_t reserved;
};

/* The partition's part of the V-Bus (lib/vbus.h, hyp/vbus.h). An rtos partition that serves channels: its
 * region in its own RAM (ipa, size; struct vbus_region first, the channels' offsets count from there;
 * intid 0). The Linux partition that has the device: its register page (ipa, size = 4096: one page
 * trapped whole, the registers use 0x200 bytes of it) and its interrupt as that partition sees it
 * (intid, an SPI no partition owns). size 0 = none. */
struct __attribute__((packed)) blob_vbus {
    uint64_t ipa;
    uint32_t size;
    uint32_t intid;
};

/* One V-Bus channel (since 2.2), in configuration order: a named port of the device in the Linux
 * partition, served by rtos partition `rtos` (an index into the partition records). Offsets count from
 * the start of that partition's region; each is VBUS_ALIGN-aligned, and the region holds every piece
 * (struct vbus_chan; struct vbus_ring + size data bytes for each ring) without overlap. A channel's
 * index in its region (its bit in the doorbell masks) is its position among the channels of the same
 * rtos partition in this table. */
struct __attribute__((packed)) blob_channel {
    char name[VBUS_NAME_SIZE]; /* NUL-padded, 1..VBUS_NAME_SIZE-1 characters [A-Za-z0-9._-], no leading '.' */
    uint32_t rtos;
    uint32_t chan_off;
    uint32_t to_linux_off;
    uint32_t to_linux_size; /* a power of two in [VBUS_RING_MIN, VBUS_RING_MAX] */
    uint32_t to_rtos_off;
    uint32_t to_rtos_size;
    uint32_t reserved[2];
};

/* One partition, in configuration order (its index + 1 is its console focus key). */
struct __attribute__((packed)) blob_partition {
    char name[BLOB_NAME_SIZE];
    char tag[BLOB_NAME_SIZE]; /* console line tag */
    uint32_t kind;            /* BLOB_KIND_* */
    uint32_t flags;           /* BLOB_PART_*; other bits zero */
    uint64_t cpu_mask;        /* bit n = CPU n (MPIDR Aff0 = n on qemu-virt) */
    uint64_t ram_ipa;
    uint64_t ram_pa;
    uint64_t ram_size;  /* 2 MiB multiple; ram_ipa and ram_pa 2 MiB aligned */
    uint64_t entry_ipa; /* PC of the boot CPU at entry (EL1h, MMU off, x0 = dtb_ipa) */
    uint64_t dtb_ipa;
    uint32_t boot_cpu; /* the CPU that starts at entry_ipa */
    uint32_t device_count;
    uint32_t irq_count;
    uint32_t starved_ms; /* since 2.3: non-zero exactly with BLOB_PART_SHARED (Linux's wait reported) */
    struct blob_image image[BLOB_IMAGES];
    struct blob_device device[BLOB_MAX_DEVICES]; /* unused entries zero */
    uint32_t irq[BLOB_MAX_IRQS];                 /* GIC INTIDs (SPIs) the partition owns, ascending */
    struct blob_seed seed[BLOB_MAX_SEEDS];       /* since 1.1 */
    struct blob_stream stream[BLOB_MAX_STREAMS]; /* since 2.0 */
    struct blob_fault fault;                     /* since 2.1 */
    struct blob_conring conring;                 /* since 2.1 */
    struct blob_vbus vbus;                       /* since 2.2 */
    uint8_t reserved2[8];
};

#define BLOB_CHECK(type, field, off) \
    _Static_assert(offsetof(struct type, field) == (off), #type "." #field " is at byte " #off)
BLOB_CHECK(blob_header, magic, 0);
BLOB_CHECK(blob_header, version_major, 4);
BLOB_CHECK(blob_header, version_minor, 6);
BLOB_CHECK(blob_header, header_size, 8);
BLOB_CHECK(blob_header, total_size, 12);
BLOB_CHECK(blob_header, crc32, 16);
BLOB_CHECK(blob_header, flags, 20);
BLOB_CHECK(blob_header, partition_count, 24);
BLOB_CHECK(blob_header, partition_size, 28);
BLOB_CHECK(blob_header, partitions_offset, 32);
BLOB_CHECK(blob_header, board_cpus, 36);
BLOB_CHECK(blob_header, ram_base, 40);
BLOB_CHECK(blob_header, ram_size, 48);
BLOB_CHECK(blob_header, hyp_base, 56);
BLOB_CHECK(blob_header, hyp_size, 64);
BLOB_CHECK(blob_header, console_escape, 72);
BLOB_CHECK(blob_header, console_focus, 73);
BLOB_CHECK(blob_header, gic_version, 74);
BLOB_CHECK(blob_header, reserved1, 76);
BLOB_CHECK(blob_header, board, 80);
BLOB_CHECK(blob_header, channel_count, 96);
BLOB_CHECK(blob_header, channel_size, 100);
BLOB_CHECK(blob_header, channels_offset, 104);
BLOB_CHECK(blob_header, reserved2, 108);
_Static_assert(sizeof(struct blob_header) == 128, "blob header is 128 bytes");
BLOB_CHECK(blob_image, bundle_offset, 0);
BLOB_CHECK(blob_image, size, 8);
BLOB_CHECK(blob_image, load_ipa, 16);
_Static_assert(sizeof(struct blob_image) == 24, "image entry is 24 bytes");
_Static_assert(sizeof(struct blob_device) == 24, "device entry is 24 bytes");
_Static_assert(sizeof(struct blob_seed) == 8, "seed entry is 8 bytes");
_Static_assert(sizeof(struct blob_stream) == 8, "stream entry is 8 bytes");
BLOB_CHECK(blob_fault, policy, 0);
BLOB_CHECK(blob_fault, max_restarts, 1);
BLOB_CHECK(blob_fault, window_s, 4);
_Static_assert(sizeof(struct blob_fault) == 8, "fault policy is 8 bytes");
BLOB_CHECK(blob_conring, ipa, 0);
BLOB_CHECK(blob_conring, size, 8);
_Static_assert(sizeof(struct blob_conring) == 16, "console ring is 16 bytes");
BLOB_CHECK(blob_partition, name, 0);
BLOB_CHECK(blob_partition, tag, 16);
BLOB_CHECK(blob_partition, kind, 32);
BLOB_CHECK(blob_partition, flags, 36);
BLOB_CHECK(blob_partition, cpu_mask, 40);
BLOB_CHECK(blob_partition, ram_ipa, 48);
BLOB_CHECK(blob_partition, ram_pa, 56);
BLOB_CHECK(blob_partition, ram_size, 64);
BLOB_CHECK(blob_partition, entry_ipa, 72);
BLOB_CHECK(blob_partition, dtb_ipa, 80);
BLOB_CHECK(blob_partition, boot_cpu, 88);
BLOB_CHECK(blob_partition, device_count, 92);
BLOB_CHECK(blob_partition, irq_count, 96);
BLOB_CHECK(blob_partition, starved_ms, 100);
BLOB_CHECK(blob_partition, image, 104);
BLOB_CHECK(blob_partition, device, 176);
BLOB_CHECK(blob_partition, irq, 368);
BLOB_CHECK(blob_partition, seed, 496);
BLOB_CHECK(blob_partition, stream, 512);
BLOB_CHECK(blob_partition, fault, 528);
BLOB_CHECK(blob_vbus, ipa, 0);
BLOB_CHECK(blob_vbus, size, 8);
BLOB_CHECK(blob_vbus, intid, 12);
_Static_assert(sizeof(struct blob_vbus) == 16, "V-Bus place is 16 bytes");
BLOB_CHECK(blob_channel, name, 0);
BLOB_CHECK(blob_channel, rtos, 32);
BLOB_CHECK(blob_channel, chan_off, 36);
BLOB_CHECK(blob_channel, to_linux_off, 40);
BLOB_CHECK(blob_channel, to_linux_size, 44);
BLOB_CHECK(blob_channel, to_rtos_off, 48);
BLOB_CHECK(blob_channel, to_rtos_size, 52);
BLOB_CHECK(blob_channel, reserved, 56);
_Static_assert(sizeof(struct blob_channel) == 64, "channel record is 64 bytes");
BLOB_CHECK(blob_partition, conring, 536);
BLOB_CHECK(blob_partition, vbus, 552);
BLOB_CHECK(blob_partition, reserved2, 568);
_Static_assert(sizeof(struct blob_partition) == 576, "partition record is 576 bytes");
#undef BLOB_CHECK

/* The largest blob a hypervisor with max_parts partitions reads. */
#define BLOB_MAX_SIZE(max_parts)                                                \
    (sizeof(struct blob_header) + (max_parts) * sizeof(struct blob_partition) + \
     VBUS_MAX_CHANNELS * sizeof(struct blob_channel))

#endif /* HYP_BLOB_H */
