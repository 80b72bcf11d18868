/*
 * Runs the hypervisor's configuration blob parser (hyp/core/config.c, built natively) on a blob file and
 * prints what it read, one key=value per line, or "panic: MESSAGE" when it refuses the blob. Driven by
 * tests/unit/python/test_hyp_blob.py with blobs that tools/rtmux makes.
 *
 *   hyp_blob_reader BLOB-FILE
 *
 * The bundle is taken to start 1 MiB before the blob (a 1 MiB hypervisor image); images are printed as
 * offsets from there, which are the blob's bundle offsets.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hyp/config.h"
#include "hyp/partition.h"
#include "hyp/vbus.h"
#include "hyp_stubs.h"

/* The hypervisor image before the blob, and the whole bundle, as the reader pretends: large enough for
 * the images of tests/unit/python/conftest.py (bundle offsets up to 38 MiB); only used in arithmetic. */
#define HYP_IMAGE_SIZE  0x100000u
#define HYP_BUNDLE_SIZE 0x4000000u

static struct partition parts[HYP_MAX_PARTITIONS];

static void print_image(unsigned i, const char *what, const struct part_image *img, uint64_t image_base)
{
    printf("part%u.%s=0x%llx,0x%llx,0x%llx\n", i, what,
           (unsigned long long)(img->size ? (uint64_t)(uintptr_t)img->data - image_base : 0),
           (unsigned long long)img->size, (unsigned long long)img->ipa);
}

static unsigned part_index_in(const struct partition *p)
{
    return (unsigned)(p - parts);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s BLOB-FILE\n", argv[0]);
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (f == NULL) {
        perror(argv[1]);
        return 2;
    }
    static uint8_t buf[1u << 16];
    size_t n = fread(buf, 1, sizeof(buf), f);
    fclose(f);
    /* Exactly the file's bytes, so AddressSanitizer catches a parser that reads past the blob. */
    uint8_t *blob = malloc(n > 0 ? n : 1);
    if (blob == NULL) {
        return 2;
    }
    memcpy(blob, buf, n);
    uint64_t base = (uint64_t)(uintptr_t)blob - HYP_IMAGE_SIZE;
    struct hyp_config cfg;
    volatile unsigned count = 0;
    bool panicked = HYP_EXPECT_PANIC(
        count = config_parse(blob, n, base, HYP_BUNDLE_SIZE, parts, HYP_MAX_PARTITIONS, &cfg, &hyp_vbus));
    if (panicked) {
        printf("panic: %s\n", hyp_panic_msg);
        free(blob);
        return 1;
    }
    printf("partitions=%u\nboard_cpus=%u\nconsole_tags=%d\nconsole_view=%d\nconsole_escape=%u\nconsole_focus="
           "%u\n",
           count, cfg.board_cpus, cfg.console_tags, cfg.console_focus_view, cfg.console_escape,
           cfg.console_focus);
    printf("boot_report=%d\ngic_version=%u\n", cfg.boot_report, cfg.gic_version);
    for (unsigned i = 0; i < count; i++) {
        const struct partition *p = &parts[i];
        printf("part%u.name=%s\npart%u.tag=%s\npart%u.kind=%d\npart%u.cpu_mask=0x%llx\n", i, p->name, i,
               p->tag, i, (int)p->kind, i, (unsigned long long)p->cpu_mask);
        printf("part%u.ram=0x%llx,0x%llx,0x%llx\npart%u.entry_ipa=0x%llx\n", i,
               (unsigned long long)p->ram_ipa, (unsigned long long)p->ram_pa, (unsigned long long)p->ram_size,
               i, (unsigned long long)p->entry_ipa);
        print_image(i, "kernel", &p->kernel, base);
        print_image(i, "initrd", &p->initrd, base);
        print_image(i, "dtb", &p->dtb, base);
        for (unsigned d = 0; d < p->ndev; d++) {
            printf("part%u.device%u=0x%llx,0x%llx,0x%llx\n", i, d, (unsigned long long)p->dev[d].ipa,
                   (unsigned long long)p->dev[d].pa, (unsigned long long)p->dev[d].size);
        }
        printf("part%u.irqs=", i);
        const char *sep = "";
        for (unsigned q = 32; q < HYP_MAX_INTID; q++) {
            if (part_owns_irq(p, q)) {
                printf("%s%u", sep, q);
                sep = ",";
            }
        }
        printf("\n");
        for (unsigned k = 0; k < HYP_MAX_SEEDS; k++) {
            if (p->seed[k].size != 0) {
                printf("part%u.seed%u=0x%x,0x%x\n", i, k, p->seed[k].off, p->seed[k].size);
            }
        }
        for (unsigned k = 0; k < HYP_MAX_STREAMS; k++) {
            if (p->stream[k].count != 0) {
                printf("part%u.stream%u=0x%x,0x%x\n", i, k, p->stream[k].first, p->stream[k].count);
            }
        }
        printf("part%u.seeds_fixed=%d\n", i, p->seeds_fixed);
        if (p->share.rtos) {
            printf("part%u.shared=%u\n", i, p->share.starved_ms);
        }
        printf("part%u.fault=%u,%u,%u\n", i, (unsigned)p->fault.policy, p->fault.max_restarts,
               (unsigned)p->fault.window_s);
        if (p->con.ring != NULL) {
            printf("part%u.conring=0x%lx,0x%x\n", i,
                   (unsigned long)((uintptr_t)p->con.ring - p->ram_pa + p->ram_ipa), p->con.ring_size);
        }
        if (p->vbus.region != NULL) {
            /* The PA pointer, as an IPA again: it must be where the IPA says. */
            printf("part%u.vbus=0x%llx,0x%x,0x%llx\n", i, (unsigned long long)p->vbus.ipa, p->vbus.size,
                   (unsigned long long)((uintptr_t)p->vbus.region - p->ram_pa + p->ram_ipa));
        }
    }
    const struct vbus_config *vb = &hyp_vbus;
    printf("vbus.nchan=%u\n", vb->nchan);
    if (vb->linux != NULL) {
        printf("vbus.device=%u,0x%llx,%u\n", part_index_in(vb->linux), (unsigned long long)vb->mmio_ipa,
               vb->intid);
    }
    for (unsigned k = 0; k < vb->nchan; k++) {
        const struct vbus_chan_config *c = &vb->chan[k];
        printf("chan%u=%s,%u,%u,0x%x,0x%x,0x%x,0x%x,0x%x\n", k, c->name, part_index_in(c->rtos), c->index,
               c->chan_off, c->to_linux_off, c->to_linux_size, c->to_rtos_off, c->to_rtos_size);
    }
    free(blob);
    return 0;
}
