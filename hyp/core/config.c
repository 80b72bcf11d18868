/*
 * The configuration blob (format: hyp/blob.h). Everything in it was validated by ./rtmux; the checks
 * here catch a blob that is missing, damaged, from another revision, or that would make partitions
 * overlap the hypervisor or each other. Pure: no hardware access (tests/unit/c runs it on the host).
 */
#include "hyp/config.h"

#include "arm64/gicv2.h"
#include "board.h"
#include "hyp/blob.h"
#include "hyp/limits.h"
#include "hyp/partition.h"
#include "hyp/printf.h"
#include "hyp/vbus.h"
#include "lib/conring.h"
#include "lib/string.h"
#include "lib/vbus.h"

/* The V-Bus as the blob configures it (core/vbus.c reads it); main hands it to config_parse. */
struct vbus_config hyp_vbus;

_Static_assert(BLOB_MAX_DEVICES == HYP_MAX_DEVICES, "a partition holds every device range of its record");
_Static_assert(BLOB_MAX_SEEDS == HYP_MAX_SEEDS, "a partition holds every seed range of its record");
_Static_assert(BLOB_MAX_STREAMS == HYP_MAX_STREAMS, "a partition holds every stream range of its record");
_Static_assert(BLOB_MAX_RESTARTS == HYP_MAX_RESTARTS,
               "a partition remembers every restart its policy allows");

/* CRC-32 (hyp/blob.h), over the blob with its crc32 field taken as zero. */
static uint32_t blob_crc(const uint8_t *b, uint32_t size)
{
    const uint32_t crc_at = (uint32_t)offsetof(struct blob_header, crc32);
    uint32_t crc = 0xffffffffu;
    for (uint32_t i = 0; i < size; i++) {
        uint8_t byte = (i >= crc_at && i < crc_at + 4u) ? 0 : b[i];
        crc ^= byte;
        for (unsigned k = 0; k < 8; k++) {
            crc = (crc >> 1) ^ (BLOB_CRC_POLY & (0u - (crc & 1u)));
        }
    }
    return ~crc;
}

static bool overlaps(uint64_t a, uint64_t asize, uint64_t b, uint64_t bsize)
{
    return a < b + bsize && b < a + asize;
}

/* A non-empty range that does not wrap around the address space, every bound a multiple of `align`. */
static bool range_ok(uint64_t base, uint64_t size, uint64_t align)
{
    return size != 0 && base + size > base && base % align == 0 && size % align == 0;
}

/* The blob's promise for RAM (2 MiB granules: stage 2 maps it with blocks). */
#define RAM_ALIGN (2u * 1024u * 1024u)
/* Device ranges are mapped page by page. */
#define DEVICE_ALIGN 4096u

static void check_header(const struct blob_header *h, size_t avail, unsigned max)
{
    if (avail < sizeof(*h) || h->magic != BLOB_MAGIC) {
        hyp_panic("no configuration blob after the hypervisor image (at 0x%lx): build and boot the system "
                  "image made by ./rtmux (e.g. ./rtmux run), not build/hyp/rtmux.img alone",
                  (unsigned long)(uintptr_t)h);
    }
    if (h->version_major != BLOB_VERSION_MAJOR) {
        hyp_panic("configuration blob revision %u.%u; this hypervisor reads %u.x", h->version_major,
                  h->version_minor, BLOB_VERSION_MAJOR);
    }
    uint32_t nparts = h->partition_count;
    /* The channel table follows the partition records; a 2.1 blob has zeros there (no V-Bus). */
    uint64_t parts_end = sizeof(struct blob_header) + (uint64_t)nparts * sizeof(struct blob_partition);
    uint32_t nchan = h->channel_count;
    bool chans_ok = nchan == 0
                        ? h->channel_size == 0 && h->channels_offset == 0
                        : nchan <= VBUS_MAX_CHANNELS && h->channel_size == sizeof(struct blob_channel) &&
                              h->channels_offset == parts_end;
    if (h->header_size != sizeof(struct blob_header) || h->partition_size != sizeof(struct blob_partition) ||
        h->partitions_offset != sizeof(struct blob_header) || !chans_ok ||
        h->total_size != parts_end + (uint64_t)nchan * sizeof(struct blob_channel) || nparts == 0 ||
        nparts > max) {
        hyp_panic(
            "configuration blob layout not understood (header %u, %u partitions of %u bytes, %u channels "
            "of %u bytes at %u, total %u)",
            h->header_size, nparts, h->partition_size, nchan, h->channel_size, h->channels_offset,
            h->total_size);
    }
    if (h->total_size > avail) {
        hyp_panic("configuration blob truncated: %u bytes announced, %lu present", h->total_size,
                  (unsigned long)avail);
    }
    if (blob_crc((const uint8_t *)h, h->total_size) != h->crc32) {
        hyp_panic("configuration blob CRC mismatch: the image is damaged");
    }
}

static void read_images(struct partition *p, const struct blob_partition *r, uint64_t image_base,
                        uint64_t payload_size)
{
    struct part_image *img[BLOB_IMAGES] = {
        [BLOB_IMAGE_KERNEL] = &p->kernel, [BLOB_IMAGE_INITRD] = &p->initrd, [BLOB_IMAGE_DTB] = &p->dtb};
    for (unsigned k = 0; k < BLOB_IMAGES; k++) {
        const struct blob_image *e = &r->image[k];
        if (e->size == 0) {
            continue;
        }
        if (e->load_ipa < p->ram_ipa || e->size > p->ram_size ||
            e->load_ipa - p->ram_ipa > p->ram_size - e->size) {
            hyp_panic("partition %s: image %u (0x%lx bytes at IPA 0x%lx) is outside its RAM", p->name, k,
                      (unsigned long)e->size, (unsigned long)e->load_ipa);
        }
        if (e->size > payload_size || e->bundle_offset > payload_size - e->size) {
            hyp_panic("partition %s: image %u (0x%lx bytes at offset 0x%lx) is outside the payload", p->name,
                      k, (unsigned long)e->size, (unsigned long)e->bundle_offset);
        }
        img[k]->data = (const uint8_t *)(uintptr_t)(image_base + e->bundle_offset);
        img[k]->size = e->size;
        img[k]->ipa = e->load_ipa;
    }
    if (p->kernel.size == 0) {
        hyp_panic("partition %s has no image", p->name);
    }
    for (unsigned k = 0; k < BLOB_MAX_SEEDS; k++) {
        uint32_t off = r->seed[k].offset, size = r->seed[k].size;
        if (size != 0 && (uint64_t)off + size > p->dtb.size) {
            hyp_panic("partition %s: seed range %u (0x%x bytes at 0x%x) is outside its DTB", p->name, k, size,
                      off);
        }
        p->seed[k].off = off;
        p->seed[k].size = size;
    }
}

/* IOMMU stream ranges: none empty or wrapping, none shared with another range (a stream is one
 * partition's). */
static void read_streams(struct partition *parts, unsigned i, const struct blob_partition *r)
{
    struct partition *p = &parts[i];
    for (unsigned k = 0; k < BLOB_MAX_STREAMS; k++) {
        uint32_t first = r->stream[k].first, count = r->stream[k].count;
        if (count == 0) {
            continue;
        }
        if (first + count < first) {
            hyp_panic("partition %s: stream range 0x%x+0x%x wraps", p->name, first, count);
        }
        for (unsigned j = 0; j <= i; j++) {
            for (unsigned m = 0; m < HYP_MAX_STREAMS; m++) {
                uint32_t f = parts[j].stream[m].first, c = parts[j].stream[m].count;
                if (c != 0 && first < f + c && f < first + count) {
                    hyp_panic("partitions %s and %s share IOMMU streams 0x%x..0x%x", parts[j].name, p->name,
                              first > f ? first : f, (first + count < f + c ? first + count : f + c) - 1u);
                }
            }
        }
        p->stream[k].first = first;
        p->stream[k].count = count;
    }
}

/* A 2.0 blob has zeros here: stop, the behaviour before fault policies existed. */
static void read_fault_policy(struct partition *p, const struct blob_partition *r)
{
    const struct blob_fault *f = &r->fault;
    if (f->policy == BLOB_FAULT_STOP && f->max_restarts == 0) {
        p->fault.policy = FAULT_STOP;
    } else if (f->policy == BLOB_FAULT_RESTART && f->max_restarts >= 1 &&
               f->max_restarts <= BLOB_MAX_RESTARTS && f->window_s != 0) {
        p->fault.policy = FAULT_RESTART;
        p->fault.max_restarts = f->max_restarts;
        p->fault.window_s = f->window_s;
    } else {
        hyp_panic("partition %s: fault policy %u with %u restarts in %u s is not valid", p->name, f->policy,
                  f->max_restarts, f->window_s);
    }
}

/* The console ring lies inside the partition's RAM, its data a power of two, its header cache-line
 * aligned (the partition and the hypervisor share it). */
static void read_conring(struct partition *p, const struct blob_partition *r)
{
    uint64_t ipa = r->conring.ipa, size = r->conring.size;
    if (size == 0) {
        return;
    }
    if ((size & (size - 1u)) != 0 || ipa % CONRING_HEADER_SIZE != 0 || ipa < p->ram_ipa ||
        ipa - p->ram_ipa > p->ram_size || p->ram_size - (ipa - p->ram_ipa) < CONRING_HEADER_SIZE + size) {
        hyp_panic("partition %s: console ring of 0x%lx bytes at IPA 0x%lx is not inside its RAM or not a "
                  "power of two",
                  p->name, (unsigned long)size, (unsigned long)ipa);
    }
    p->con.ring = (struct conring *)(uintptr_t)(p->ram_pa + (ipa - p->ram_ipa));
    p->con.ring_size = (uint32_t)size;
}

static bool is_pow2(uint64_t v)
{
    return v != 0 && (v & (v - 1u)) == 0;
}

/* The emulated devices every partition has (core/main.c registers them): the V-Bus page may not shadow
 * them. */
static bool over_emulated(uint64_t ipa, uint64_t size)
{
    return overlaps(ipa, size, BOARD_UART_BASE, BOARD_UART_SIZE) ||
           overlaps(ipa, size, BOARD_GICD_BASE, GICD_SIZE) ||
           overlaps(ipa, size, BOARD_GICC_BASE, GICC_SIZE) ||
           overlaps(ipa, size, BOARD_GICR_BASE, (uint64_t)HYP_MAX_CPUS * BOARD_GICR_STRIDE);
}

/* A partition's V-Bus place (struct blob_vbus). An rtos partition's region lies in its RAM and clear of
 * what is loaded there (its images and console ring: the rtos and the hypervisor write the region, so
 * an overlap would let either corrupt the other's data); the tools also keep it above the image's BSS
 * (the Image header's image_size), which only they read. The Linux partition's device page lies outside
 * its RAM, its passed-through devices and the emulated devices (a mapping or another handler would
 * shadow the trap), with an SPI (checked against every partition's interrupts once all are read). */
static void read_vbus_place(struct partition *p, const struct blob_partition *r, struct vbus_config *vbus)
{
    uint64_t ipa = r->vbus.ipa, size = r->vbus.size;
    uint32_t intid = r->vbus.intid;
    if (size == 0) {
        if (ipa != 0 || intid != 0) {
            hyp_panic("partition %s: V-Bus place at IPA 0x%lx (interrupt %u) has size 0", p->name,
                      (unsigned long)ipa, intid);
        }
        return;
    }
    if (p->kind == PART_RTOS) {
        if (intid != 0 || ipa % VBUS_ALIGN != 0 || size % VBUS_ALIGN != 0 ||
            size < sizeof(struct vbus_region) || ipa < p->ram_ipa || ipa - p->ram_ipa > p->ram_size ||
            p->ram_size - (ipa - p->ram_ipa) < size) {
            hyp_panic("partition %s: V-Bus region of 0x%lx bytes at IPA 0x%lx is not inside its RAM or not "
                      "aligned",
                      p->name, (unsigned long)size, (unsigned long)ipa);
        }
        const struct part_image *img[BLOB_IMAGES] = {&p->kernel, &p->initrd, &p->dtb};
        for (unsigned k = 0; k < BLOB_IMAGES; k++) {
            if (img[k]->size != 0 && overlaps(ipa, size, img[k]->ipa, img[k]->size)) {
                hyp_panic("partition %s: V-Bus region at IPA 0x%lx overlaps its image %u", p->name,
                          (unsigned long)ipa, k);
            }
        }
        if (p->con.ring != NULL) {
            uint64_t ring_ipa = p->ram_ipa + ((uint64_t)(uintptr_t)p->con.ring - p->ram_pa);
            if (overlaps(ipa, size, ring_ipa, CONRING_HEADER_SIZE + (uint64_t)p->con.ring_size)) {
                hyp_panic("partition %s: V-Bus region at IPA 0x%lx overlaps its console ring", p->name,
                          (unsigned long)ipa);
            }
        }
        p->vbus.region = (struct vbus_region *)(uintptr_t)(p->ram_pa + (ipa - p->ram_ipa));
        p->vbus.ipa = ipa;
        p->vbus.size = (uint32_t)size;
        return;
    }
    if (vbus->linux != NULL) {
        hyp_panic("partitions %s and %s both have the V-Bus device", vbus->linux->name, p->name);
    }
    bool bad = size != DEVICE_ALIGN || ipa % DEVICE_ALIGN != 0 || ipa + size < ipa ||
               overlaps(ipa, size, p->ram_ipa, p->ram_size) || over_emulated(ipa, size) || intid < 32u ||
               intid >= HYP_MAX_INTID;
    for (unsigned d = 0; d < p->ndev; d++) {
        bad = bad || overlaps(ipa, size, p->dev[d].ipa, p->dev[d].size);
    }
    if (bad) {
        hyp_panic("partition %s: V-Bus device (0x%lx bytes at IPA 0x%lx, interrupt %u) is not one page apart "
                  "from its RAM and devices, with an SPI",
                  p->name, (unsigned long)size, (unsigned long)ipa, intid);
    }
    vbus->linux = p;
    vbus->mmio_ipa = ipa;
    vbus->intid = intid;
}

/* 1..VBUS_NAME_SIZE-1 characters [A-Za-z0-9._-], not starting with '.', then NULs only (Linux makes a
 * file name of it: /dev/virtio-ports/NAME). */
static bool name_ok(const char *name)
{
    size_t n = 0;
    while (n < VBUS_NAME_SIZE && name[n] != 0) {
        char c = name[n];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                  c == '-' || (c == '.' && n != 0);
        if (!ok) {
            return false;
        }
        n++;
    }
    if (n == 0 || n == VBUS_NAME_SIZE) {
        return false;
    }
    for (size_t k = n; k < VBUS_NAME_SIZE; k++) {
        if (name[k] != 0) {
            return false;
        }
    }
    return true;
}

/* The three pieces of a channel in its region: its control block and its two rings with their data. */
struct vbus_piece {
    uint64_t off, size;
    const char *what;
};

static void chan_pieces(const struct blob_channel *c, struct vbus_piece out[3])
{
    out[0] = (struct vbus_piece){c->chan_off, sizeof(struct vbus_chan), "control block"};
    out[1] = (struct vbus_piece){c->to_linux_off, VBUS_RING_HEADER_SIZE + (uint64_t)c->to_linux_size,
                                 "to_linux ring"};
    out[2] = (struct vbus_piece){c->to_rtos_off, VBUS_RING_HEADER_SIZE + (uint64_t)c->to_rtos_size,
                                 "to_rtos ring"};
}

/* The channel table (since 2.2): every name well-formed and unique, every channel served by an rtos
 * partition with a region that holds its pieces, aligned and disjoint (the region header included), so
 * the device model can follow any offset without a check of its own. */
static void read_channels(const struct blob_header *h, const uint8_t *blob, struct partition *parts,
                          unsigned nparts, struct vbus_config *vbus)
{
    const struct blob_channel *tab = (const struct blob_channel *)(blob + h->channels_offset);
    unsigned n = h->channel_count;
    for (unsigned i = 0; i < n; i++) {
        const struct blob_channel *c = &tab[i];
        if (!name_ok(c->name)) {
            hyp_panic("V-Bus channel %u: name not terminated, empty, or not [A-Za-z0-9._-] without a leading "
                      "'.'",
                      i);
        }
        if (c->rtos >= nparts || parts[c->rtos].kind != PART_RTOS || parts[c->rtos].vbus.region == NULL) {
            hyp_panic("V-Bus channel %s: partition %u is not an rtos partition with a V-Bus region", c->name,
                      c->rtos);
        }
        const struct partition *p = &parts[c->rtos];
        if (!is_pow2(c->to_linux_size) || !is_pow2(c->to_rtos_size) || c->to_linux_size < VBUS_RING_MIN ||
            c->to_rtos_size < VBUS_RING_MIN || c->to_linux_size > VBUS_RING_MAX ||
            c->to_rtos_size > VBUS_RING_MAX) {
            hyp_panic("V-Bus channel %s: ring sizes 0x%x (to_linux) and 0x%x (to_rtos) are not powers of two "
                      "from 0x%x to 0x%x",
                      c->name, c->to_linux_size, c->to_rtos_size, VBUS_RING_MIN, VBUS_RING_MAX);
        }
        struct vbus_piece mine[3];
        chan_pieces(c, mine);
        unsigned index = 0;
        for (unsigned k = 0; k < 3; k++) {
            if (mine[k].off % VBUS_ALIGN != 0 || mine[k].off < sizeof(struct vbus_region) ||
                mine[k].off + mine[k].size > p->vbus.size) {
                hyp_panic(
                    "V-Bus channel %s: %s (0x%lx bytes at offset 0x%lx) is not aligned or not inside the "
                    "region of %s (0x%x bytes)",
                    c->name, mine[k].what, (unsigned long)mine[k].size, (unsigned long)mine[k].off, p->name,
                    p->vbus.size);
            }
            for (unsigned m = 0; m < k; m++) {
                if (overlaps(mine[k].off, mine[k].size, mine[m].off, mine[m].size)) {
                    hyp_panic("V-Bus channel %s: its %s overlaps its %s", c->name, mine[k].what,
                              mine[m].what);
                }
            }
        }
        for (unsigned j = 0; j < i; j++) {
            const struct blob_channel *o = &tab[j];
            if (memcmp(o->name, c->name, VBUS_NAME_SIZE) == 0) {
                hyp_panic("V-Bus channels %u and %u are both named %s", j, i, c->name);
            }
            if (o->rtos != c->rtos) {
                continue;
            }
            index++;
            struct vbus_piece theirs[3];
            chan_pieces(o, theirs);
            for (unsigned k = 0; k < 3; k++) {
                for (unsigned m = 0; m < 3; m++) {
                    if (overlaps(mine[k].off, mine[k].size, theirs[m].off, theirs[m].size)) {
                        hyp_panic("V-Bus channel %s: its %s overlaps the %s of channel %s", c->name,
                                  mine[k].what, theirs[m].what, o->name);
                    }
                }
            }
        }
        struct vbus_chan_config *cfg = &vbus->chan[i];
        memcpy(cfg->name, c->name, VBUS_NAME_SIZE);
        cfg->rtos = &parts[c->rtos];
        cfg->index = index;
        cfg->chan_off = c->chan_off;
        cfg->to_linux_off = c->to_linux_off;
        cfg->to_linux_size = c->to_linux_size;
        cfg->to_rtos_off = c->to_rtos_off;
        cfg->to_rtos_size = c->to_rtos_size;
    }
    vbus->nchan = n;
    /* Nothing half-configured: the device, the regions and the channels come together. */
    if ((n == 0) != (vbus->linux == NULL)) {
        hyp_panic("configuration blob: %u V-Bus channels, %s", n,
                  n == 0 ? "but a Linux partition has the V-Bus device"
                         : "but no Linux partition has the V-Bus device");
    }
    for (unsigned i = 0; i < nparts; i++) {
        bool serves = false;
        for (unsigned k = 0; k < n; k++) {
            serves = serves || vbus->chan[k].rtos == &parts[i];
        }
        if (parts[i].vbus.region != NULL && !serves) {
            hyp_panic("partition %s: V-Bus region without a channel", parts[i].name);
        }
        if (vbus->linux != NULL && part_owns_irq(&parts[i], vbus->intid)) {
            hyp_panic("partition %s owns interrupt %u, the V-Bus device's", parts[i].name, vbus->intid);
        }
    }
}

/* The CPUs p (partition i) may have in common with partitions 0..i-1: a shared rtos partition's with one
 * Linux partition (never a CPU in three, or in two of one kind). */
static uint64_t shared_with(const struct partition *parts, unsigned i, const struct partition *p)
{
    uint64_t ok = 0, bad = 0;
    for (unsigned j = 0; j < i; j++) {
        const struct partition *q = &parts[j];
        uint64_t common = p->cpu_mask & q->cpu_mask;
        bool pair = (p->share.rtos && q->kind == PART_LINUX) || (q->share.rtos && p->kind == PART_LINUX);
        bad |= pair ? common & ok : common; /* a second pair on a CPU is a third holder */
        ok |= pair ? common : 0u;
    }
    return ok & ~bad;
}

unsigned config_parse(const uint8_t *blob, size_t avail, uint64_t image_base, uint64_t bundle_size,
                      struct partition *parts, unsigned max, struct hyp_config *out, struct vbus_config *vbus)
{
    const struct blob_header *h = (const struct blob_header *)blob;
    check_header(h, avail, max);
    memset(vbus, 0, sizeof(*vbus));
    uint32_t nparts = h->partition_count;
    out->board_cpus = h->board_cpus;
    out->gic_version = h->gic_version == 0 ? 3u : h->gic_version;
    if (out->gic_version != 2u && out->gic_version != 3u) {
        hyp_panic("configuration blob: GIC version %u (rtmux drives GICv3 and GICv2)", out->gic_version);
    }
    out->ram_base = h->ram_base;
    out->ram_size = h->ram_size;
    out->console_tags = (h->flags & BLOB_FLAG_CONSOLE_TAGS) != 0;
    out->console_focus_view = (h->flags & BLOB_FLAG_CONSOLE_VIEW) != 0;
    out->boot_report = (h->flags & BLOB_FLAG_BOOT_REPORT) != 0;
    out->console_escape = h->console_escape;
    out->console_focus = h->console_focus < nparts ? h->console_focus : 0;
    /* The bundle: the hypervisor image, the blob after it, the partitions' images after the blob. */
    uint64_t image_size = bundle_size;
    if ((uint64_t)(uintptr_t)blob - image_base + h->total_size > bundle_size) {
        hyp_panic("configuration blob ends beyond the bundle (0x%lx bytes)", (unsigned long)bundle_size);
    }
    uint64_t cpus_seen = 0, cpus_shared = 0;
    for (unsigned i = 0; i < nparts; i++) {
        const struct blob_partition *r =
            (const struct blob_partition *)(blob + h->partitions_offset + i * sizeof(struct blob_partition));
        struct partition *p = &parts[i];
        memset(p, 0, sizeof(*p));
        p->name = r->name;
        p->tag = r->tag;
        if (r->name[BLOB_NAME_SIZE - 1] != 0 || r->tag[BLOB_NAME_SIZE - 1] != 0) {
            hyp_panic("configuration blob: partition %u name or tag not terminated", i);
        }
        p->kind = r->kind == BLOB_KIND_LINUX ? PART_LINUX : PART_RTOS;
        p->cpu_mask = r->cpu_mask;
        p->share.rtos = (r->flags & BLOB_PART_SHARED) != 0;
        p->share.starved_ms = r->starved_ms;
        if ((r->flags & ~BLOB_PART_SHARED) != 0 || (p->share.rtos && r->kind != BLOB_KIND_RTOS) ||
            (p->share.rtos != (r->starved_ms != 0))) {
            hyp_panic(
                "partition %s: bad flags 0x%x or starved_ms %u (the shared flag is an rtos partition's, "
                "with a non-zero starved_ms)",
                p->name, (unsigned)r->flags, (unsigned)r->starved_ms);
        }
        p->ram_ipa = r->ram_ipa;
        p->ram_pa = r->ram_pa;
        p->ram_size = r->ram_size;
        p->entry_ipa = r->entry_ipa;
        if ((r->kind != BLOB_KIND_RTOS && r->kind != BLOB_KIND_LINUX) || p->cpu_mask == 0 ||
            (p->cpu_mask & cpus_seen & ~shared_with(parts, i, p)) != 0 || p->cpu_mask >> HYP_MAX_CPUS != 0) {
            hyp_panic("partition %s: bad kind %u or CPUs 0x%lx (overlapping or beyond %u CPUs)", p->name,
                      r->kind, (unsigned long)p->cpu_mask, HYP_MAX_CPUS);
        }
        /* The rtos owns its CPU's physical GIC interface, which the hypervisor never touches; it could not
         * take the hypervisor's wake-up SGI that starts a further CPU (lifecycle.c). Linux may have any. */
        if (p->kind == PART_RTOS && (p->cpu_mask & (p->cpu_mask - 1u)) != 0) {
            hyp_panic("partition %s: CPUs 0x%lx: an rtos partition runs on one CPU", p->name,
                      (unsigned long)p->cpu_mask);
        }
        cpus_shared |= p->cpu_mask & cpus_seen;
        cpus_seen |= p->cpu_mask;
        if (!range_ok(p->ram_pa, p->ram_size, RAM_ALIGN) || !range_ok(p->ram_ipa, p->ram_size, RAM_ALIGN) ||
            !range_ok(h->ram_base, h->ram_size, RAM_ALIGN) || p->ram_pa < h->ram_base ||
            p->ram_pa + p->ram_size > h->ram_base + h->ram_size ||
            overlaps(p->ram_pa, p->ram_size, h->hyp_base, h->hyp_size) ||
            overlaps(p->ram_pa, p->ram_size, image_base, image_size)) {
            hyp_panic("partition %s: RAM 0x%lx+0x%lx is outside the board's RAM or over the hypervisor",
                      p->name, (unsigned long)p->ram_pa, (unsigned long)p->ram_size);
        }
        for (unsigned j = 0; j < i; j++) {
            if (overlaps(p->ram_pa, p->ram_size, parts[j].ram_pa, parts[j].ram_size)) {
                hyp_panic("partitions %s and %s overlap in RAM", parts[j].name, p->name);
            }
        }
        if (r->device_count > BLOB_MAX_DEVICES || r->irq_count > BLOB_MAX_IRQS) {
            hyp_panic("partition %s: %u devices / %u interrupts exceed the limits", p->name, r->device_count,
                      r->irq_count);
        }
        for (unsigned d = 0; d < r->device_count; d++) {
            struct mem_range dev = {r->device[d].ipa, r->device[d].pa, r->device[d].size};
            /* A device range is mapped as device memory at stage 2: it must be no RAM at all (that
             * would open the rtos's or the hypervisor's memory), and not cover the partition's RAM. */
            if (!range_ok(dev.ipa, dev.size, DEVICE_ALIGN) || !range_ok(dev.pa, dev.size, DEVICE_ALIGN) ||
                overlaps(dev.pa, dev.size, h->ram_base, h->ram_size) ||
                overlaps(dev.ipa, dev.size, p->ram_ipa, p->ram_size)) {
                hyp_panic("partition %s: device range %u (PA 0x%lx, IPA 0x%lx, 0x%lx bytes) is misaligned, "
                          "empty, wraps, or overlaps RAM",
                          p->name, d, (unsigned long)dev.pa, (unsigned long)dev.ipa, (unsigned long)dev.size);
            }
            for (unsigned j = 0; j < i; j++) {
                for (unsigned e = 0; e < parts[j].ndev; e++) {
                    if (overlaps(dev.pa, dev.size, parts[j].dev[e].pa, parts[j].dev[e].size)) {
                        hyp_panic("partitions %s and %s share device memory at PA 0x%lx", parts[j].name,
                                  p->name, (unsigned long)dev.pa);
                    }
                }
            }
            p->dev[d] = dev;
        }
        p->ndev = r->device_count;
        for (unsigned q = 0; q < r->irq_count; q++) {
            uint32_t intid = r->irq[q];
            if (intid < 32 || intid >= HYP_MAX_INTID) {
                hyp_panic("partition %s: interrupt %u is not an SPI", p->name, intid);
            }
            for (unsigned j = 0; j < i; j++) {
                if (part_owns_irq(&parts[j], intid)) {
                    hyp_panic("partitions %s and %s both claim interrupt %u", parts[j].name, p->name, intid);
                }
            }
            p->vgic.irqs[intid / 32] |= 1u << (intid % 32);
        }
        read_images(p, r, image_base, bundle_size);
        p->seeds_fixed = (h->flags & BLOB_FLAG_FIXED_SEEDS) != 0;
        read_streams(parts, i, r);
        read_fault_policy(p, r);
        read_conring(p, r);
        read_vbus_place(p, r, vbus);
    }
    for (unsigned i = 0; i < nparts; i++) {
        if (parts[i].share.rtos && (parts[i].cpu_mask & cpus_shared) == 0) {
            hyp_panic("partition %s: shared, but no Linux partition has its CPU", parts[i].name);
        }
    }
    read_channels(h, blob, parts, nparts, vbus);
    return nparts;
}
