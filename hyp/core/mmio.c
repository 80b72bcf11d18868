/*
 * Emulated MMIO dispatch: a stage-2 data abort at an IPA inside one of the partition's registered
 * regions goes to that region's handler.
 */
#include "hyp/mmio.h"

#include "hyp/partition.h"
#include "hyp/printf.h"
#include "hyp/vcpu.h"

void mmio_register(struct partition *p, const char *name, uint64_t ipa, uint64_t size, mmio_handler_t handler,
                   void *ctx)
{
    if (p->nmmio == HYP_MAX_MMIO) {
        hyp_panic("partition %s: more than %u emulated MMIO regions", p->name, HYP_MAX_MMIO);
    }
    for (unsigned i = 0; i < p->nmmio; i++) {
        const struct mmio_region *r = &p->mmio[i];
        if (ipa < r->ipa + r->size && r->ipa < ipa + size) {
            hyp_panic("partition %s: emulated MMIO at 0x%lx overlaps the region at 0x%lx", p->name,
                      (unsigned long)ipa, (unsigned long)r->ipa);
        }
    }
    p->mmio[p->nmmio++] = (struct mmio_region){ipa, size, handler, ctx, name, 0};
}

bool mmio_dispatch(struct vcpu *v, uint64_t ipa, bool write, uint64_t *val, unsigned size)
{
    struct partition *p = v->part;
    for (unsigned i = 0; i < p->nmmio; i++) {
        struct mmio_region *r = &p->mmio[i];
        if (ipa >= r->ipa && ipa - r->ipa < r->size) {
            __atomic_fetch_add(&r->accesses, 1u, __ATOMIC_RELAXED);
            return r->handler(v, r->ctx, ipa - r->ipa, write, val, size);
        }
    }
    return false;
}

void mmio_report(const struct partition *p)
{
    if (p->nmmio == 0) {
        return;
    }
    char line[256];
    int len = hyp_snprintf(line, sizeof(line), "rtmux: mmio partition=%s", p->name);
    for (unsigned r = 0; r < p->nmmio && len > 0 && (size_t)len < sizeof(line); r++) {
        len += hyp_snprintf(line + len, sizeof(line) - (size_t)len, " %s=%lu", p->mmio[r].name,
                            (unsigned long)__atomic_load_n(&p->mmio[r].accesses, __ATOMIC_RELAXED));
    }
    hyp_printf("%s\n", line);
}
