/*
 * Bounded passes (core/vpass.c): the work one trap of an emulated virtio device may do (a register
 * access, the device's own interrupt), whatever the guest put in its rings. A pass counts descriptor
 * visits (virtq_visits), bytes copied and, where the guest shares a CPU with the rtos, time; on the CPU
 * it shares with the rtos it stops before any step once the rtos needs the CPU (vgic_rtos_soon, as the
 * console drain). A pass that stopped with work left asks for the next one with an SGI to its own CPU,
 * a hypervisor interrupt taken as soon as the guest runs there again (after the rtos, on a shared CPU).
 *
 * The device's code asks vpass_ok before each step (a chain, a copy step, a message) and keeps its own
 * state whole between two steps, so stopping between them is invisible to the guest but for the time
 * it takes. Everything here runs under the device's lock; struct vpass is part of the device's state.
 *
 * A pass is begun and ended in every trap and asked before every step, so those are inline: out of line
 * they cost the V-Bus 0.8 % of a 64-byte round trip (icount, issue 25).
 */
#ifndef HYP_VPASS_H
#define HYP_VPASS_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/cpu.h"
#include "arch/vgic.h"
#include "drivers/gic.h"
#include "hyp/vcpu.h"
#include "hyp/virtq.h"

/*
 * The budget of one pass. VPASS_DESCS descriptor visits and VPASS_BYTES bytes: far above what one of
 * Linux's notifications needs (a 32 KiB write is one to sixteen descriptors, a receive buffer one page)
 * and far below the ~13,000 visits of a queue whose 64 entries name one 64-descriptor chain. A chain is
 * never cut (up to three walks of it: the check and a copy across the ring's wrap), so a pass may pass
 * VPASS_DESCS by up to 3 * the queue size in visits. The bounds in time are vpass_init's.
 */
#define VPASS_DESCS 512u
#define VPASS_BYTES (64u * 1024u)

struct vpass {
    /* Set once (vpass_init). */
    bool tight;           /* the guest shares a CPU with an rtos: small copy steps, passes bounded in time */
    uint64_t shared_cpus; /* those of the guest's CPUs that an rtos shares */
    unsigned sgi;         /* the device's own interrupt: asks for the next pass */
    uint32_t step;        /* bytes per copy step */
    uint64_t ticks;       /* a pass's length on the guest's other CPUs when tight, in counter ticks */
    uint64_t guard;       /* the rtos's guard in counter ticks */
    /* The pass under way. */
    const struct vcpu *v; /* the CPU's guest virtual CPU, for the rtos that may share it; NULL: none */
    bool shared;          /* v's CPU is shared with the rtos: the pass steps aside for it */
    uint64_t visits0;     /* virtq_visits at its start */
    uint32_t bytes;       /* copied so far */
    uint64_t t0;          /* its start (read only when tight and not shared) */
    bool cut;             /* it stopped with work left */
    bool for_rtos;        /* it stopped because the rtos needs the CPU */
    /* Between passes. */
    bool more; /* a pass stopped with work left: the next `sgi` takes it up */
};

/* The constant bounds, for a guest whose CPUs shared_cpus (a mask) are shared with an rtos; the pass's
 * request for more work is SGI `sgi` to its own CPU. */
void vpass_init(struct vpass *ps, uint64_t shared_cpus, unsigned sgi);

/* A pass begins on v's CPU (NULL: not in one of the guest's traps). Only a tight device reads the
 * counter (a guest's round trips cross several passes each). */
static inline void vpass_begin(struct vpass *ps, const struct vcpu *v)
{
    ps->v = v;
    ps->visits0 = virtq_visits;
    ps->bytes = 0;
    ps->cut = false;
    ps->for_rtos = false;
    ps->shared = v != NULL && ((ps->shared_cpus >> v->cpu) & 1u) != 0;
    if (ps->tight && !ps->shared) {
        ps->t0 = arch_counter();
    }
}

/* Whether the pass may take one more step; once it may not, it has stopped (cut) and says no until its
 * end. */
static inline bool vpass_ok(struct vpass *ps)
{
    if (ps->cut) {
        return false;
    }
    if (virtq_visits - ps->visits0 >= VPASS_DESCS || ps->bytes >= VPASS_BYTES ||
        (ps->tight && !ps->shared && arch_counter() - ps->t0 >= ps->ticks)) {
        ps->cut = true;
        return false;
    }
    if (ps->shared && vgic_rtos_soon(ps->v, ps->guard)) {
        ps->cut = ps->for_rtos = true;
        return false;
    }
    return true;
}

/* n more bytes were copied in this pass. */
static inline void vpass_copied(struct vpass *ps, uint32_t n)
{
    ps->bytes += n;
}

/* The pass ends: work left is asked for with the device's own interrupt on this CPU (more). Returns
 * the virtual CPU whose rtos the pass stopped for, or NULL (for vpass_wait_rtos). */
static inline const struct vcpu *vpass_end(struct vpass *ps)
{
    if (!ps->cut) {
        return NULL;
    }
    ps->more = true;
    gic_send_sgi(arch_mpidr_affinity(), ps->sgi);
    return ps->for_rtos ? ps->v : NULL;
}

/* After a pass that stopped for the rtos's timer, due within `guard` (the device's lock released: the
 * guest's other CPUs go on): waits until it fires, at most the guard. Taken as soon as this trap returns,
 * it gives the CPU to the rtos, and the request for the rest waits behind it. Returning at once would
 * only bring the request back, trap after trap, each of them a delay for the timer that fires meanwhile.
 * Nothing when v is NULL. */
static inline void vpass_wait_rtos(const struct vcpu *v, uint64_t guard)
{
    while (v != NULL && !vgic_rtos_pending(v) && vgic_rtos_soon(v, guard)) {
        arch_yield();
    }
}

/* Whether an earlier pass stopped with work left; the request is taken (cleared). */
static inline bool vpass_take_more(struct vpass *ps)
{
    bool more = ps->more;
    ps->more = false;
    return more;
}

#endif /* HYP_VPASS_H */
