/*
 * Shared-core mode's books (hyp/share.h). Each shared CPU's record is written by that CPU only (at its
 * switches); the drain CPU's tick and the reports read it with relaxed atomics, so a report may mix two
 * moments of a CPU but never prints a torn value.
 */
#include "hyp/share.h"

#include "arch/cpu.h"
#include "hyp/partition.h"
#include "hyp/printf.h"

struct share_cpu {
    struct partition *rtos, *linux;  /* NULL: the CPU is not shared */
    uint64_t mpidr;                  /* its affinity (share_begin runs on it) */
    enum share_world world;          /* who has the CPU now */
    uint64_t since;                  /* counter at the last switch */
    uint64_t ticks[SHARE_WORLDS];    /* counter ticks each world had */
    uint64_t switches[SHARE_WORLDS]; /* switches into each world */
    /* The switch being made: its direction and start, and the counter the entry stores when the new
     * world's state is loaded (settled at the next switch, which runs on this CPU after it). */
    int timing; /* enum share_world, or -1 */
    uint64_t t0, done;
    uint64_t cost[SHARE_WORLDS], timed[SHARE_WORLDS];
    /* Linux was preempted by the rtos at `wanted` (0: Linux is not waiting for the CPU): how long it has
     * waited; reported once per wait past the rtos's starved_ms. */
    uint64_t wanted;
    bool reported;
    uint64_t longest_wait, starved_waits;
};

static struct share_cpu shares[HYP_MAX_CPUS];

void share_init(void)
{
    for (unsigned c = 0; c < HYP_MAX_CPUS; c++) {
        struct share_cpu *s = &shares[c];
        s->rtos = part_rtos_sharing(c);
        s->linux = s->rtos != NULL ? part_of_cpu(c) : NULL;
        s->world = WORLD_RTOS; /* the rtos starts first */
        s->timing = -1;
    }
}

void share_begin(unsigned cpu)
{
    shares[cpu].mpidr = arch_mpidr_affinity();
    shares[cpu].since = arch_counter();
}

bool share_cpu(unsigned cpu)
{
    return cpu < HYP_MAX_CPUS && shares[cpu].rtos != NULL;
}

static uint64_t ms_of(uint64_t ticks)
{
    return ticks * 1000u / arch_counter_hz();
}

static void add(uint64_t *counter, uint64_t n)
{
    __atomic_store_n(counter, __atomic_load_n(counter, __ATOMIC_RELAXED) + n, __ATOMIC_RELAXED);
}

/* Linux got the CPU back after waiting since s->wanted: the wait's length, reported when long. */
static void wait_ends(unsigned cpu, struct share_cpu *s, uint64_t now)
{
    if (s->wanted == 0) {
        return;
    }
    uint64_t waited = now - s->wanted;
    if (waited > s->longest_wait) {
        __atomic_store_n(&s->longest_wait, waited, __ATOMIC_RELAXED);
    }
    if (ms_of(waited) >= s->rtos->share.starved_ms) {
        add(&s->starved_waits, 1u);
        /* the rtos's doing: through its line limit (a short starved_report could print one a period) */
        part_printf(s->rtos,
                    "rtmux: share cpu=%u: %s ran again after %lu ms without the CPU (%s was busy; "
                    "starved_report %u ms)\n",
                    cpu, s->linux->name, (unsigned long)ms_of(waited), s->rtos->name,
                    (unsigned)s->rtos->share.starved_ms);
    }
    __atomic_store_n(&s->wanted, 0u, __ATOMIC_RELAXED);
    s->reported = false;
}

uint64_t *share_switch(unsigned cpu, enum share_world to, uint64_t t0, bool timed)
{
    struct share_cpu *s = &shares[cpu];
    uint64_t now = arch_counter();
    if (s->timing >= 0) {
        add(&s->cost[s->timing], s->done - s->t0);
        add(&s->timed[s->timing], 1u);
    }
    add(&s->ticks[s->world], now - s->since);
    if (s->world == WORLD_LINUX && to == WORLD_RTOS) {
        __atomic_store_n(&s->wanted, now, __ATOMIC_RELAXED); /* preempted: Linux still wants the CPU */
    }
    if (to == WORLD_LINUX) {
        wait_ends(cpu, s, now);
    }
    add(&s->switches[to], 1u);
    __atomic_store_n(&s->world, to, __ATOMIC_RELAXED);
    s->since = now;
    s->timing = timed ? (int)to : -1;
    s->t0 = t0;
    return timed ? &s->done : NULL;
}

void share_linux_gone(unsigned cpu)
{
    __atomic_store_n(&shares[cpu].wanted, 0u, __ATOMIC_RELAXED);
}

void share_tick(void)
{
    uint64_t now = arch_counter();
    for (unsigned c = 0; c < HYP_MAX_CPUS; c++) {
        struct share_cpu *s = &shares[c];
        uint64_t wanted = __atomic_load_n(&s->wanted, __ATOMIC_RELAXED);
        if (s->rtos == NULL || wanted == 0 || s->reported || wanted > now ||
            ms_of(now - wanted) < s->rtos->share.starved_ms) {
            continue;
        }
        s->reported = true; /* once per wait (the CPU clears it when the wait ends) */
        part_printf(s->rtos,
                    "rtmux: share cpu=%u: %s has not run for %lu ms (%s is busy; starved_report %u ms)\n", c,
                    s->linux->name, (unsigned long)ms_of(now - wanted), s->rtos->name,
                    (unsigned)s->rtos->share.starved_ms);
    }
}

void share_report(void)
{
    uint64_t hz = arch_counter_hz();
    for (unsigned c = 0; c < HYP_MAX_CPUS; c++) {
        const struct share_cpu *s = &shares[c];
        if (s->rtos == NULL) {
            continue;
        }
        uint64_t t[SHARE_WORLDS], avg[SHARE_WORLDS];
        enum share_world now_in = __atomic_load_n(&s->world, __ATOMIC_RELAXED);
        for (unsigned w = 0; w < SHARE_WORLDS; w++) {
            t[w] = __atomic_load_n(&s->ticks[w], __ATOMIC_RELAXED);
            uint64_t n = __atomic_load_n(&s->timed[w], __ATOMIC_RELAXED);
            /* ns, rounded down; the counter's own period is the resolution of each sample */
            avg[w] = n != 0 ? __atomic_load_n(&s->cost[w], __ATOMIC_RELAXED) * 1000000000u / hz / n : 0;
        }
        if (s->mpidr == arch_mpidr_affinity()) {
            t[now_in] += arch_counter() - s->since; /* this CPU's current stretch, up to now */
        }
        hyp_printf("rtmux: share cpu=%u rtos=%s linux=%s rtos_ms=%lu linux_ms=%lu idle_ms=%lu to_linux=%lu "
                   "to_rtos=%lu switch_ns_to_linux=%lu switch_ns_to_rtos=%lu longest_wait_ms=%lu "
                   "starved=%lu\n",
                   c, s->rtos->name, s->linux->name, (unsigned long)(t[WORLD_RTOS] * 1000u / hz),
                   (unsigned long)(t[WORLD_LINUX] * 1000u / hz), (unsigned long)(t[WORLD_NONE] * 1000u / hz),
                   (unsigned long)__atomic_load_n(&s->switches[WORLD_LINUX], __ATOMIC_RELAXED),
                   (unsigned long)__atomic_load_n(&s->switches[WORLD_RTOS], __ATOMIC_RELAXED),
                   (unsigned long)avg[WORLD_LINUX], (unsigned long)avg[WORLD_RTOS],
                   (unsigned long)ms_of(__atomic_load_n(&s->longest_wait, __ATOMIC_RELAXED)),
                   (unsigned long)__atomic_load_n(&s->starved_waits, __ATOMIC_RELAXED));
    }
}
