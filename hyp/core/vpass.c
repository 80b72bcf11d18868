/*
 * Bounded passes (hyp/vpass.h, where the budget in descriptors and bytes and the pass itself are): the
 * bounds in time, set once.
 *
 * Where Linux shares a CPU with the rtos (tight), a pass copies in steps of PASS_STEP_TIGHT bytes (at
 * most ~4 us by bytes in icount, ~0.4 us by doublewords); on the shared CPU it stops before any step
 * when the rtos needs the CPU within PASS_GUARD_NS (the console drain's guard: a step stays below it, so
 * the rtos's timer never waits for one), and on Linux's other CPUs it ends after PASS_TIGHT_NS of the
 * counter: the device's lock, which a trap on the shared CPU may wait for with interrupts masked, is
 * never held longer than that and a step. Elsewhere a copy step is the whole budget (VPASS_BYTES).
 */
#include "hyp/vpass.h"

#define PASS_STEP_TIGHT 1024u
#define PASS_TIGHT_NS   4000u
#define PASS_GUARD_NS   5000u

void vpass_init(struct vpass *ps, uint64_t shared_cpus, unsigned sgi)
{
    uint64_t hz = arch_counter_hz();
    ps->shared_cpus = shared_cpus;
    ps->tight = shared_cpus != 0;
    ps->sgi = sgi;
    ps->step = ps->tight ? PASS_STEP_TIGHT : VPASS_BYTES;
    ps->ticks = hz * PASS_TIGHT_NS / 1000000000u;
    ps->guard = hz * PASS_GUARD_NS / 1000000000u;
}
