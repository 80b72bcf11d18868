/*
 * Bounded passes (hyp/vpass.h): what one trap of an emulated virtio device (the V-Bus's) may do.
 *
 * The budget of one pass. PASS_DESCS descriptor visits and PASS_BYTES bytes: far above what one of
 * Linux's notifications needs (a 32 KiB write is one to sixteen descriptors, a receive buffer one page)
 * and far below the ~13,000 visits of a queue whose 64 entries name one 64-descriptor chain. A chain is
 * never cut (up to three walks of it: the check and a copy across the ring's wrap), so a pass may pass
 * PASS_DESCS by up to 3 * the queue size in visits.
 * Where Linux shares a CPU with the rtos (tight), a pass copies in steps of PASS_STEP_TIGHT bytes (at
 * most ~4 us by bytes in icount, ~0.4 us by doublewords); on the shared CPU it stops before any step
 * when the rtos needs the CPU within PASS_GUARD_NS (the console drain's guard: a step stays below it, so
 * the rtos's timer never waits for one), and on Linux's other CPUs it ends after PASS_TIGHT_NS of the
 * counter: the device's lock, which a trap on the shared CPU may wait for with interrupts masked, is
 * never held longer than that and a step.
 */
#include "hyp/vpass.h"

#include "arch/cpu.h"
#include "arch/vgic.h"
#include "drivers/gicv3.h"
#include "hyp/vcpu.h"
#include "hyp/virtq.h"

#define PASS_DESCS      512u
#define PASS_BYTES      (64u * 1024u)
#define PASS_STEP_TIGHT 1024u
#define PASS_TIGHT_NS   4000u
#define PASS_GUARD_NS   5000u

void vpass_init(struct vpass *ps, uint64_t shared_cpus, unsigned sgi)
{
    uint64_t hz = arch_counter_hz();
    ps->shared_cpus = shared_cpus;
    ps->tight = shared_cpus != 0;
    ps->sgi = sgi;
    ps->step = ps->tight ? PASS_STEP_TIGHT : PASS_BYTES;
    ps->ticks = hz * PASS_TIGHT_NS / 1000000000u;
    ps->guard = hz * PASS_GUARD_NS / 1000000000u;
}

void vpass_begin(struct vpass *ps, const struct vcpu *v)
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

bool vpass_ok(struct vpass *ps)
{
    if (ps->cut) {
        return false;
    }
    if (virtq_visits - ps->visits0 >= PASS_DESCS || ps->bytes >= PASS_BYTES ||
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

const struct vcpu *vpass_end(struct vpass *ps)
{
    if (!ps->cut) {
        return NULL;
    }
    ps->more = true;
    gicv3_send_sgi(arch_mpidr_affinity(), ps->sgi);
    return ps->for_rtos ? ps->v : NULL;
}

void vpass_wait_rtos(const struct vcpu *v, uint64_t guard)
{
    while (v != NULL && !vgic_rtos_pending(v) && vgic_rtos_soon(v, guard)) {
        arch_yield();
    }
}
