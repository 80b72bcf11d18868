/*
 * The configuration blob (format: docs/configuration.md, tools/rtmux/blob.py). Everything in it was
 * validated by ./rtmux; the checks here catch a blob that is missing, damaged, from another revision,
 * or that would make partitions overlap the hypervisor or each other.
 */
#include "hyp/config.h"

#include "lib/string.h"

#define BLOB_MAGIC       0x43584d52u /* "RMXC" little-endian */
#define BLOB_MAJOR       1u
#define BLOB_HEADER_SIZE 128u
#define BLOB_PART_SIZE   512u
#define KIND_RTOS        1u
#define KIND_LINUX       2u
#define IMG_KERNEL       0u
#define IMG_INITRD       1u
#define IMG_DTB          2u

extern const uint8_t _head[], _end[];

bool config_console_tags = true;
uint8_t config_console_escape = 0x14;
unsigned config_console_focus;

static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

static uint64_t rd64(const uint8_t *p)
{
    return (uint64_t)rd32(p) | ((uint64_t)rd32(p + 4) << 32);
}

/* CRC-32 (IEEE 802.3, reflected 0xEDB88320), over the blob with its CRC field taken as zero. */
static uint32_t blob_crc(const uint8_t *b, uint32_t size)
{
    uint32_t crc = 0xffffffffu;
    for (uint32_t i = 0; i < size; i++) {
        uint8_t byte = (i >= 16 && i < 20) ? 0 : b[i];
        crc ^= byte;
        for (unsigned k = 0; k < 8; k++) {
            crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
        }
    }
    return ~crc;
}

static bool overlaps(uint64_t a, uint64_t asize, uint64_t b, uint64_t bsize)
{
    return a < b + bsize && b < a + asize;
}

unsigned config_load(struct partition *parts, unsigned max)
{
    const uint8_t *b = _end;
    if (rd32(b) != BLOB_MAGIC) {
        hyp_panic("no configuration blob after the hypervisor image (at 0x%lx): build and boot the system "
                  "image made by ./rtmux (e.g. ./rtmux run), not build/hyp/rtmux.img alone",
                  (unsigned long)(uintptr_t)b);
    }
    unsigned major = rd32(b + 4) & 0xffffu, minor = rd32(b + 4) >> 16;
    if (major != BLOB_MAJOR) {
        hyp_panic("configuration blob revision %u.%u; this hypervisor reads %u.x", major, minor, BLOB_MAJOR);
    }
    uint32_t total = rd32(b + 12);
    uint32_t nparts = rd32(b + 24);
    if (rd32(b + 8) != BLOB_HEADER_SIZE || rd32(b + 28) != BLOB_PART_SIZE ||
        rd32(b + 32) != BLOB_HEADER_SIZE || total != BLOB_HEADER_SIZE + nparts * BLOB_PART_SIZE ||
        nparts == 0 || nparts > max) {
        hyp_panic("configuration blob layout not understood (header %u, %u partitions of %u bytes, total %u)",
                  rd32(b + 8), nparts, rd32(b + 28), total);
    }
    if (blob_crc(b, total) != rd32(b + 16)) {
        hyp_panic("configuration blob CRC mismatch: the image is damaged");
    }
    config_console_tags = (rd32(b + 20) & 1u) != 0;
    config_console_escape = b[72];
    config_console_focus = b[73] < nparts ? b[73] : 0;
    uint64_t ram_base = rd64(b + 40), ram_size = rd64(b + 48);
    uint64_t hyp_base = rd64(b + 56), hyp_size = rd64(b + 64);
    uint64_t image_base = (uint64_t)(uintptr_t)_head;
    uint64_t cpus_seen = 0;
    for (unsigned i = 0; i < nparts; i++) {
        const uint8_t *r = b + BLOB_HEADER_SIZE + i * BLOB_PART_SIZE;
        struct partition *p = &parts[i];
        memset(p, 0, sizeof(*p));
        p->name = (const char *)r;
        p->tag = (const char *)r + 16;
        if (r[15] != 0 || r[31] != 0) {
            hyp_panic("configuration blob: partition %u name or tag not terminated", i);
        }
        uint32_t kind = rd32(r + 32);
        p->kind = kind == KIND_LINUX ? PART_LINUX : PART_RTOS;
        p->cpu_mask = rd64(r + 40);
        p->ram_ipa = rd64(r + 48);
        p->ram_pa = rd64(r + 56);
        p->ram_size = rd64(r + 64);
        p->entry_ipa = rd64(r + 72);
        p->dtb_ipa = rd64(r + 80);
        if ((kind != KIND_RTOS && kind != KIND_LINUX) || p->cpu_mask == 0 || (p->cpu_mask & cpus_seen) != 0 ||
            p->cpu_mask >> HYP_MAX_CPUS != 0) {
            hyp_panic("partition %s: bad kind %u or CPUs 0x%lx (overlapping or beyond %u CPUs)", p->name,
                      kind, (unsigned long)p->cpu_mask, HYP_MAX_CPUS);
        }
        if ((p->cpu_mask & (p->cpu_mask - 1u)) != 0) {
            hyp_panic("partition %s: CPUs 0x%lx: this hypervisor runs one CPU per partition", p->name,
                      (unsigned long)p->cpu_mask);
        }
        cpus_seen |= p->cpu_mask;
        if (p->ram_pa < ram_base || p->ram_pa + p->ram_size > ram_base + ram_size ||
            overlaps(p->ram_pa, p->ram_size, hyp_base, hyp_size) ||
            overlaps(p->ram_pa, p->ram_size, image_base, (uint64_t)(uintptr_t)_end - image_base + total)) {
            hyp_panic("partition %s: RAM 0x%lx+0x%lx is outside the board's RAM or over the hypervisor",
                      p->name, (unsigned long)p->ram_pa, (unsigned long)p->ram_size);
        }
        for (unsigned j = 0; j < i; j++) {
            if (overlaps(p->ram_pa, p->ram_size, parts[j].ram_pa, parts[j].ram_size)) {
                hyp_panic("partitions %s and %s overlap in RAM", parts[j].name, p->name);
            }
        }
        uint32_t ndev = rd32(r + 92), nirq = rd32(r + 96);
        if (ndev > HYP_MAX_DEVICES || nirq > 32) {
            hyp_panic("partition %s: %u devices / %u interrupts exceed the limits", p->name, ndev, nirq);
        }
        for (unsigned d = 0; d < ndev; d++) {
            const uint8_t *e = r + 176 + d * 24u;
            p->dev[d] = (struct mmio_range){rd64(e), rd64(e + 8), rd64(e + 16)};
        }
        p->ndev = ndev;
        for (unsigned q = 0; q < nirq; q++) {
            uint32_t intid = rd32(r + 368 + q * 4u);
            if (intid < 32 || intid >= HYP_MAX_INTID) {
                hyp_panic("partition %s: interrupt %u is not an SPI", p->name, intid);
            }
            p->irqs[intid / 32] |= 1u << (intid % 32);
        }
        struct {
            const uint8_t **data;
            uint64_t *size, *ipa;
        } img[3] = {{&p->kernel, &p->kernel_size, &p->kernel_ipa},
                    {&p->initrd, &p->initrd_size, &p->initrd_ipa},
                    {&p->dtb, &p->dtb_size, &p->dtb_ipa}};
        for (unsigned k = 0; k < 3; k++) {
            const uint8_t *e = r + 104 + k * 24u;
            uint64_t off = rd64(e), size = rd64(e + 8), ipa = rd64(e + 16);
            if (size == 0) {
                continue;
            }
            if (ipa < p->ram_ipa || ipa + size > p->ram_ipa + p->ram_size) {
                hyp_panic("partition %s: image %u (0x%lx bytes at IPA 0x%lx) is outside its RAM", p->name, k,
                          (unsigned long)size, (unsigned long)ipa);
            }
            *img[k].data = (const uint8_t *)(uintptr_t)(image_base + off);
            *img[k].size = size;
            *img[k].ipa = ipa;
        }
        if (p->kernel_size == 0) {
            hyp_panic("partition %s has no image", p->name);
        }
        /* Blob 1.1: seed ranges at 496 (zero in a 1.0 blob: none). */
        for (unsigned k = 0; k < HYP_MAX_SEEDS; k++) {
            uint32_t off = rd32(r + 496 + k * 8u), size = rd32(r + 500 + k * 8u);
            if (size != 0 && ((uint64_t)off + size > p->dtb_size)) {
                hyp_panic("partition %s: seed range %u (0x%x bytes at 0x%x) is outside its DTB", p->name, k,
                          size, off);
            }
            p->seed[k].off = off;
            p->seed[k].size = size;
        }
    }
    return nparts;
}
