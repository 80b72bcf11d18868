/*
 * Emulated MMIO: each partition has a table of regions, registered when the system is set up, and a
 * stage-2 data abort inside one is handed to its handler. Regions of one partition never overlap.
 */
#ifndef HYP_MMIO_H
#define HYP_MMIO_H

#include <stdbool.h>
#include <stdint.h>

struct partition;
struct vcpu;

/* Emulates one access of `size` bytes (1, 2, 4 or 8) at byte `off` of the region. A read stores the
 * value in *val (zero-extended); a write takes it from *val. Returns false to refuse the access (the
 * guest then gets an external abort). */
typedef bool (*mmio_handler_t)(struct vcpu *v, void *ctx, uint64_t off, bool write, uint64_t *val,
                               unsigned size);

struct mmio_region {
    uint64_t ipa, size;
    mmio_handler_t handler;
    void *ctx;
    const char *name;  /* for the reports: "uart", "gicd", ... */
    uint64_t accesses; /* emulated (or refused) accesses since boot (atomic: the partition's CPUs add) */
};

/* Adds a region named `name` to p's table; an overlap or a full table stops the machine (a set-up bug). */
void mmio_register(struct partition *p, const char *name, uint64_t ipa, uint64_t size, mmio_handler_t handler,
                   void *ctx);
/* Prints `rtmux: mmio partition=NAME REGION=N ...`: the accesses to each of p's emulated regions since
 * boot (what its CPU's dabt entries were spent on); nothing when p has none. */
void mmio_report(const struct partition *p);
/* Emulates an access by v's partition at `ipa`; false when no region holds it or the handler refuses. */
bool mmio_dispatch(struct vcpu *v, uint64_t ipa, bool write, uint64_t *val, unsigned size);

#endif /* HYP_MMIO_H */
