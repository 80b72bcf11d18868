/*
 * Entering, stopping and restarting partitions, and the power states of their CPUs.
 *
 * A partition's boot CPU (its first) starts with it; each of its other CPUs waits in the hypervisor
 * (cpu_wait: interrupts taken at EL2) until a running CPU of the partition starts it with PSCI CPU_ON,
 * and goes back there with CPU_OFF. Every change of a partition's CPU power states (struct vcpu's power
 * and requests) and of its going_down happens under that partition's CPU lock, so CPU_ON, CPU_OFF and a
 * stop or restart always see one consistent picture.
 *
 * Stopping or restarting a partition (SYSTEM_OFF, SYSTEM_RESET, a fault) on one of its CPUs: that CPU
 * sets going_down (the first one to do so does the work; any other that tries turns itself off
 * instead), asks each other CPU that is not off to stop (VCPU_REQ_STOP, then the kick SGI makes it
 * leave its guest), and waits until each has quiesced its own state (its timers, list registers and
 * private interrupts, which only it can reach) and turned off. Only then is the partition's shared
 * state wiped: its SPIs, its devices, its RAM. A restart then starts its boot CPU alone (handed over as
 * CPU_ON would, when the restart ran on another CPU); Linux starts the others with CPU_ON, as at boot.
 *
 * Shared-core mode: on a CPU an rtos shares with Linux, both virtual CPUs live (hyp_rtos_vcpu and
 * hyp_vcpu), and the power states above are Linux's as everywhere. The rtos has the CPU whenever it is
 * running and not idle: its idle WFI traps (part_rtos_idle) and hands the CPU to Linux if Linux's virtual
 * CPU is on (resumed) or starting (started), else the hypervisor waits there; any interrupt of the rtos
 * while Linux runs or while the hypervisor waits gives the CPU back to it at once (part_rtos_preempt).
 * Whatever stops one side leaves the other running: a Linux CPU that turns off or stops, or a stopped
 * rtos, goes on with the other world (shared_next).
 */
#include "hyp/lifecycle.h"

#include "arch/cpu.h"
#include "arch/entry.h"
#include "arch/firmware.h"
#include "arch/guest.h"
#include "arch/spinlock.h"
#include "arch/vgic.h"
#include "hyp/conmux.h"
#include "hyp/console.h"
#include "hyp/partition.h"
#include "hyp/printf.h"
#include "hyp/share.h"
#include "hyp/vbus.h"
#include "hyp/vcpu.h"
#include "lib/string.h"

/* Serialises partition state changes, so exactly one CPU sees the last partition stop. */
static spinlock_t part_lock;
/* Each partition's CPU lock (header comment). Never held while waiting for another CPU. */
static spinlock_t cpus_lock[HYP_MAX_PARTITIONS];

static spinlock_t *cpus_lock_of(const struct partition *p)
{
    return &cpus_lock[part_index(p)];
}

static void set_power(struct vcpu *v, enum vcpu_power power)
{
    __atomic_store_n(&v->power, (int)power, __ATOMIC_RELEASE);
}

static enum vcpu_power get_power(const struct vcpu *v)
{
    return (enum vcpu_power)__atomic_load_n(&v->power, __ATOMIC_ACQUIRE);
}

/* What the hypervisor refused or emulated for p, if anything (hostile-guest tests read this line); at a
 * restart through p's line limit (a reset loop repeats it), at a stop always. */
static void report_stats(struct partition *p, bool restart)
{
    if ((p->stats.aborts | p->stats.setway | p->stats.sysregs | p->stats.undefs | p->stats.resamples) == 0) {
        return;
    }
    char line[256];
    (void)hyp_snprintf(line, sizeof(line),
                       "rtmux: partition %s: refused or emulated: %lu aborts, %lu set/way operations, %lu "
                       "PMU/debug registers, %lu undefined system registers, %lu level-interrupt resamples "
                       "(%lu withdrawn)\n",
                       p->name, (unsigned long)p->stats.aborts, (unsigned long)p->stats.setway,
                       (unsigned long)p->stats.sysregs, (unsigned long)p->stats.undefs,
                       (unsigned long)p->stats.resamples, (unsigned long)p->stats.withdrawn);
    if (restart) {
        part_printf(p, "%s", line); /* with the count of the lines the limit kept back before it */
    } else {
        hyp_printf("%s", line);
    }
}

/* The x0 a partition's boot CPU starts with: its DTB's address (0: none). */
static uint64_t boot_x0(const struct partition *p)
{
    return p->dtb.size != 0 ? p->dtb.ipa : 0;
}

/*
 * This CPU without a guest: it waits in the hypervisor, taking its interrupts at EL2 (the console tick
 * on the drain CPU, kicks, the V-Bus doorbell), until its power state becomes ON_PENDING (CPU_ON, or a
 * restart handing it the boot), then enters its partition there. The check runs with interrupts masked
 * and WFI wakes on a masked interrupt too, so a kick that comes between the check and the WFI is not
 * slept through.
 */
static void __attribute__((noreturn)) shared_next(unsigned cpu, bool rtos_idle, uint64_t t0);

/* A Linux reset on a CPU it shares with the rtos wipes and reloads 512 MiB (tens of ms): it runs on a
 * stack of its own and pauses between pieces whenever an rtos interrupt is pending, so the rtos gets the
 * CPU at once and the reload goes on when the rtos idles again (shared_next). */
static struct {
    struct hyp_ctx ctx;
    bool paused;
} reload[HYP_MAX_CPUS];
static uint8_t reload_stacks[HYP_MAX_CPUS][HYP_STACK_SIZE] __attribute__((aligned(16)));

static bool rtos_runs_on(unsigned cpu)
{
    const struct partition *r = hyp_rtos_vcpu[cpu].part;
    return r != NULL && r->state == PART_RUNNING;
}

static void __attribute__((noreturn)) cpu_wait(struct vcpu *v)
{
    spinlock_t *lock = cpus_lock_of(v->part);
    if (v->part->kind == PART_LINUX && rtos_runs_on(v->cpu)) {
        shared_next(v->cpu, false,
                    arch_counter()); /* the rtos has the CPU; Linux's CPU_ON reaches it there */
    }
    arch_guest_wait_setup(v);
    for (;;) {
        arch_irq_disable();
        spin_lock(lock);
        if ((v->requests & VCPU_REQ_STOP) != 0) {
            v->requests = 0; /* asked to stop before it started: it stays off */
            set_power(v, VCPU_OFF);
        }
        bool start = v->power == VCPU_ON_PENDING;
        if (start) {
            set_power(v, VCPU_ON);
        }
        spin_unlock(lock);
        if (start) {
            arch_guest_start(v, v->on_entry, v->on_ctx);
        }
        arch_wfi();
        arch_irq_enable(); /* what woke the WFI is taken here */
    }
}

/* This CPU's virtual CPU turns off: its own state quiesced first, then off (its requests served). */
static void cpu_turn_off(struct vcpu *v)
{
    spinlock_t *lock = cpus_lock_of(v->part);
    arch_vcpu_quiesce(v);
    spin_lock(lock);
    v->requests = 0;
    v->leaving = false;
    set_power(v, VCPU_OFF);
    spin_unlock(lock);
}

/* This CPU turns off because another CPU of its partition stops or restarts it. */
static void __attribute__((noreturn)) cpu_stopped(struct vcpu *v)
{
    cpu_turn_off(v);
    if (v->part->kind == PART_LINUX) {
        cpu_wait(v);
    }
    arch_guest_park((int)v->cpu == con_drain_cpu);
}

/* Linux's virtual CPU lx on its shared CPU takes the CPU, whose other world is saved or stopped: resumed
 * where it left, or started (CPU_ON, a restart, the boot). Returns when it is off (a stop asked of it by
 * another CPU of its partition is served here: it turns off). */
static void linux_take_cpu(struct vcpu *lx, uint64_t t0)
{
    if ((__atomic_load_n(&lx->requests, __ATOMIC_ACQUIRE) & VCPU_REQ_STOP) != 0) {
        cpu_turn_off(lx);
    }
    spinlock_t *lock = cpus_lock_of(lx->part);
    spin_lock(lock);
    enum vcpu_power power = get_power(lx);
    if (power == VCPU_ON_PENDING && (lx->requests & VCPU_REQ_STOP) == 0) {
        set_power(lx, VCPU_ON);
    }
    spin_unlock(lock);
    if (power == VCPU_OFF || (power == VCPU_ON && lx->part->state != PART_RUNNING)) {
        share_linux_gone(lx->cpu);
        return;
    }
    vgic_shared_reclaim(lx); /* the rtos's GIC start-up may have disabled Linux's PPIs */
    if (power == VCPU_ON) {
        arch_world_enter(lx, share_switch(lx->cpu, WORLD_LINUX, t0, true));
    }
    (void)share_switch(lx->cpu, WORLD_LINUX, t0, false);
    arch_guest_start(lx, lx->on_entry, lx->on_ctx);
}

/* Waits in the hypervisor on a shared CPU whose rtos is idle and whose Linux is off, taking the
 * hypervisor's interrupts (a kick may start Linux); true once an rtos interrupt is pending. */
static bool shared_idle_wait(struct vcpu *lx)
{
    vgic_shared_reclaim(lx); /* the kick and the console tick, which the rtos's GIC start-up disables */
    arch_hyp_cpuif();
    arch_wfi(); /* interrupts stay masked at EL2: a pending one ends the WFI and is read below */
    return vgic_handle_irq(lx);
}

/* Shared CPU `cpu` after the world that had it cannot go on (the rtos idles, the rtos stopped, or
 * Linux's CPU turned off or stopped; the rtos's state, if it runs, is saved): Linux if it can run,
 * else the rtos, or the hypervisor waits for either. */
static void __attribute__((noreturn)) shared_next(unsigned cpu, bool rtos_idle, uint64_t t0)
{
    struct vcpu *lx = &hyp_vcpu[cpu], *r = &hyp_rtos_vcpu[cpu];
    bool waiting = false;
    for (;;) {
        if (reload[cpu].paused) {
            reload[cpu].paused = false;
            arch_ctx_resume(&reload[cpu].ctx); /* back into reload_pause, on the reload's stack */
        }
        linux_take_cpu(lx, t0); /* returns only when Linux is off */
        if (!rtos_runs_on(cpu)) {
            cpu_wait(lx); /* neither runs: as any Linux CPU that is off */
        }
        if (!rtos_idle) {
            /* It was not idle when Linux got the CPU: back to it (its next idle WFI comes back here). */
            arch_world_enter(r, share_switch(cpu, WORLD_RTOS, t0, true));
        }
        if (!waiting) {
            (void)share_switch(cpu, WORLD_NONE, t0, false);
            waiting = true;
        }
        if (shared_idle_wait(lx)) {
            arch_world_enter(r, share_switch(cpu, WORLD_RTOS, arch_counter(), true));
        }
        t0 = arch_counter();
    }
}

void part_rtos_idle(struct vcpu *r)
{
    uint64_t t0 = arch_counter();
    guest_skip_insn(&r->guest); /* past the WFI: it returns as if woken */
    arch_world_save(r);
    shared_next(r->cpu, true, t0);
}

void part_rtos_preempt(struct vcpu *lx, uint64_t t0)
{
    arch_world_save(lx);
    arch_world_enter(&hyp_rtos_vcpu[lx->cpu], share_switch(lx->cpu, WORLD_RTOS, t0, true));
}

/* The rtos's interrupt is pending on shared CPU lx->cpu, where Linux's take-down or reload runs on
 * reload[]'s stack: the rtos gets the CPU, and the work resumes here at its next idle (shared_next). */
static void rtos_first(struct vcpu *lx)
{
    unsigned cpu = lx->cpu;
    if (arch_ctx_save(&reload[cpu].ctx)) {
        arch_hyp_cpuif(); /* resumed: the rtos idles again (it left its own values there) */
        (void)share_switch(cpu, WORLD_LINUX, arch_counter(), false);
        return;
    }
    reload[cpu].paused = true;
    arch_world_enter(&hyp_rtos_vcpu[cpu], share_switch(cpu, WORLD_RTOS, arch_counter(), true));
}

/*
 * The messages of Linux's take-down on a CPU it shares with the rtos (its stop's reports, ~15 lines,
 * held the rtos 39-115 us when printed at once): each is formatted and written with interrupts masked,
 * which takes up to LINE_GUARD_NS (measured in icount, the longest line), so it starts only when the
 * rtos is not due within that long; otherwise it waits for the rtos's interrupt and gives it the CPU
 * first. line_pause_for[cpu] is Linux's virtual CPU there while its take-down runs on reload[]'s stack
 * (down_body), else NULL: the pause needs that stack to come back to.
 */
#define LINE_GUARD_NS 20000u
static struct vcpu *line_pause_for[HYP_MAX_CPUS];

static void line_pause(void)
{
    const struct vcpu *me = arch_this_vcpu();
    if (me == NULL) {
        return; /* a CPU that has run no virtual CPU yet: no take-down of its own to pause */
    }
    struct vcpu *lx = line_pause_for[me->cpu];
    uint64_t guard = arch_counter_hz() * LINE_GUARD_NS / 1000000000u;
    if (lx == NULL || !vgic_rtos_soon(lx, guard)) {
        return;
    }
    uint64_t until = arch_counter() + 2u * guard; /* a timer the rtos disabled at its GIC never comes */
    while (!vgic_rtos_pending(lx)) {
        if (arch_counter() > until) {
            return;
        }
    }
    rtos_first(lx);
}

/* Takes v's partition down to this CPU alone (header comment); false when another CPU already does. */
static bool take_down(struct vcpu *v)
{
    struct partition *p = v->part;
    spinlock_t *lock = cpus_lock_of(p);
    uint64_t others = 0;
    spin_lock(lock);
    if (p->going_down) {
        spin_unlock(lock);
        return false;
    }
    p->going_down = true;
    for (unsigned c = 0; c < HYP_MAX_CPUS; c++) {
        struct vcpu *t = &hyp_vcpu[c];
        if (((p->cpu_mask >> c) & 1u) != 0 && c != v->cpu && t->power != VCPU_OFF) {
            t->requests |= VCPU_REQ_STOP;
            others |= 1ull << c;
        }
    }
    spin_unlock(lock);
    for (uint64_t m = others; m != 0; m &= m - 1u) {
        vgic_kick(&hyp_vcpu[__builtin_ctzll(m)]); /* only a trapping (Linux) partition has several CPUs */
    }
    for (uint64_t m = others; m != 0; m &= m - 1u) {
        while (get_power(&hyp_vcpu[__builtin_ctzll(m)]) != VCPU_OFF) {
            arch_yield();
        }
    }
    return true;
}

void part_enter(struct vcpu *v)
{
    struct partition *p = v->part;
    if (p->kind != PART_LINUX && p->share.rtos) {
        /* The rtos starts first; Linux, if this is its boot CPU, at the rtos's first idle WFI. */
        struct vcpu *lx = &hyp_vcpu[v->cpu];
        if (v->cpu == part_boot_cpu(lx->part)) {
            lx->on_entry = lx->part->entry_ipa;
            lx->on_ctx = boot_x0(lx->part);
            set_power(lx, VCPU_ON_PENDING);
        }
    }
    if (v->cpu == part_boot_cpu(p)) {
        set_power(v, VCPU_ON);
        arch_guest_start(v, p->entry_ipa, boot_x0(p));
    }
    cpu_wait(v); /* a further CPU: the partition starts it with CPU_ON */
}

/* Stops in their reports: the last partition to stop powers the system off once every report is out. */
static unsigned stops_reporting;

/* Stops v's partition, taken down to this CPU and quiesced. */
static void __attribute__((noreturn)) stop_down(struct vcpu *v, const char *why)
{
    struct partition *p = v->part;
    con_ring_close(p);
    vbus_part_down(p);
    spin_lock(&part_lock);
    p->state = PART_OFF;
    stops_reporting++;
    spin_unlock(&part_lock);
    /* Outside part_lock: on a shared CPU the rtos may run between these lines (line_pause), and stop. */
    hyp_printf("rtmux: partition %s stopped: %s\n", p->name, why);
    part_lines_report(p);
    report_stats(p, false);
    vcpu_report_entries();
    vbus_report();
    spin_lock(&part_lock);
    bool last = --stops_reporting == 0 && !part_any_running();
    spin_unlock(&part_lock);
    line_pause_for[v->cpu] = NULL; /* what follows leaves reload[]'s stack */
    spin_lock(cpus_lock_of(p));
    set_power(v, VCPU_OFF);
    spin_unlock(cpus_lock_of(p));
    if (last) {
        con_drain(VUART_DRAIN_ALL, NULL); /* the drain CPU may be parked: write out what is left from here */
        hyp_printf("rtmux: no partition left running; system off\n");
        con_sync();
        fw_system_off();
    }
    /* The drain CPU still carries the console (input, and the other partitions' output): it keeps
     * taking interrupts at EL2; the stopped partition's own interrupts are dropped (vgic.c). A stopped
     * partition's CPUs never start again. A shared CPU goes on with the other world. */
    if (share_cpu(v->cpu)) {
        shared_next(v->cpu, false, arch_counter());
    }
    if (p->kind == PART_LINUX) {
        cpu_wait(v);
    }
    arch_guest_park((int)v->cpu == con_drain_cpu);
}

/* Between two pieces of a Linux reload on a shared CPU (above): the rtos first. */
static void reload_pause(void *ctx)
{
    struct vcpu *lx = ctx;
    if (vgic_rtos_pending(lx)) {
        rtos_first(lx);
    }
}

/* Restarts v's partition, taken down to this CPU and quiesced, from its pristine images; the caller
 * has logged why. */
static void __attribute__((noreturn)) restart_down(struct vcpu *v)
{
    struct partition *p = v->part;
    report_stats(p, true);
    con_ring_close(p);
    vbus_part_down(p); /* its channels close before the wipe */
    vuart_reset(&p->con.uart);
    part_load(p, rtos_runs_on(v->cpu) && p->kind == PART_LINUX ? reload_pause : NULL, v);
    arch_part_irqs_init(p); /* its SPIs back on its boot CPU, as at the first start */
    vbus_part_up(p);
    struct vcpu *boot = part_vcpu(p, part_boot_cpu(p));
    spinlock_t *lock = cpus_lock_of(p);
    spin_lock(lock);
    p->going_down = false;
    if (boot != v) {
        boot->on_entry = p->entry_ipa;
        boot->on_ctx = boot_x0(p);
        set_power(boot, VCPU_ON_PENDING);
        v->requests = 0;
        set_power(v, VCPU_OFF);
    } else {
        set_power(v, VCPU_ON);
    }
    spin_unlock(lock);
    line_pause_for[v->cpu] = NULL; /* what follows leaves reload[]'s stack */
    if (boot == v) {
        arch_guest_start(v, p->entry_ipa, boot_x0(p));
    }
    vgic_kick(boot); /* waiting in cpu_wait: it starts the partition */
    cpu_wait(v);
}

static void __attribute__((noreturn)) fault_down(struct vcpu *v, const char *what);

enum down_kind { DOWN_STOP, DOWN_RESET, DOWN_FAULT };

/* v's partition, taken down to this CPU: quiesced, then stopped, restarted, or as its fault policy says. */
static void __attribute__((noreturn)) down_work(struct vcpu *v, enum down_kind kind, const char *what)
{
    arch_vcpu_quiesce(v);
    arch_part_quiesce(v->part);
    if (kind == DOWN_STOP) {
        stop_down(v, what);
    }
    if (kind == DOWN_FAULT) {
        fault_down(v, what);
    }
    /* through its line limit: a guest resetting in a loop printed 268,318 of these in 240 s */
    part_printf(v->part, "rtmux: partition %s: reset requested; restarting from its pristine images\n",
                v->part->name);
    restart_down(v);
}

/* A take-down of Linux on a CPU it shares with the running rtos, on reload[]'s stack (the reason copied
 * there: the CPU's own stack serves the rtos's entries while the work gives way to it). */
struct down_job {
    struct vcpu *v;
    enum down_kind kind;
    char what[HYP_FAULT_TEXT_MAX + 96];
};
static struct down_job down[HYP_MAX_CPUS];

static void __attribute__((noreturn)) down_body(void *arg)
{
    struct down_job *d = arg;
    line_pause_for[d->v->cpu] = d->v;
    hyp_print_set_pause(line_pause);
    down_work(d->v, d->kind, d->what);
}

/* Goes on with the take-down of v's partition (down_work): on reload[]'s stack when v is Linux on a CPU
 * it shares with the running rtos, where its messages and its reload give way to the rtos. */
static void __attribute__((noreturn)) go_down(struct vcpu *v, enum down_kind kind, const char *what)
{
    if (v->part->kind != PART_LINUX || !rtos_runs_on(v->cpu)) {
        down_work(v, kind, what);
    }
    unsigned cpu = v->cpu;
    down[cpu].v = v;
    down[cpu].kind = kind;
    size_t n = what != NULL ? strlen(what) : 0u;
    n = n < sizeof(down[cpu].what) - 1u ? n : sizeof(down[cpu].what) - 1u;
    memcpy(down[cpu].what, what != NULL ? what : "", n);
    down[cpu].what[n] = '\0';
    arch_run_on_stack(reload_stacks[cpu] + HYP_STACK_SIZE, down_body, &down[cpu]);
}

void part_stop(struct vcpu *v, const char *why)
{
    if (!take_down(v)) {
        cpu_stopped(v);
    }
    go_down(v, DOWN_STOP, why);
}

void part_reset(struct vcpu *v)
{
    if (!take_down(v)) {
        cpu_stopped(v);
    }
    go_down(v, DOWN_RESET, NULL);
}

/* Records a fault restart at `now` when the policy's rate allows one. The ring holds the times of the
 * last max_restarts restarts, so its oldest entry (the one about to be overwritten) decides: a restart
 * is refused while max_restarts of them lie within the window. */
static bool restart_allowed(struct partition *p, uint64_t now)
{
    uint64_t window = arch_counter_hz() * p->fault.window_s;
    unsigned slot = (unsigned)(p->fault.restarts % p->fault.max_restarts);
    if (p->fault.restarts >= p->fault.max_restarts && now - p->fault.restart_stamp[slot] < window) {
        return false;
    }
    p->fault.restart_stamp[slot] = now;
    p->fault.restarts++;
    return true;
}

void part_fault(struct vcpu *v, const char *what)
{
    if (!take_down(v)) {
        cpu_stopped(v); /* another CPU already stops or restarts the partition */
    }
    go_down(v, DOWN_FAULT, what);
}

/* The fault policy of v's partition, taken down to this CPU and quiesced. */
static void __attribute__((noreturn)) fault_down(struct vcpu *v, const char *what)
{
    struct partition *p = v->part;
    char why[HYP_FAULT_TEXT_MAX + 96];
    line_pause(); /* the reason is formatted as a line is */
    p->fault.count++;
    if (p->fault.policy != FAULT_RESTART) {
        (void)hyp_snprintf(why, sizeof(why), "fault %lu: %s; policy stop", (unsigned long)p->fault.count,
                           what);
        stop_down(v, why);
    }
    if (restart_allowed(p, arch_counter())) {
        part_printf(p,
                    "rtmux: partition %s: fault %lu: %s; policy restart: restarting from its pristine images "
                    "(restart %lu; at most %u in %u s)\n",
                    p->name, (unsigned long)p->fault.count, what, (unsigned long)p->fault.restarts,
                    p->fault.max_restarts, (unsigned)p->fault.window_s);
        restart_down(v);
    }
    (void)hyp_snprintf(
        why, sizeof(why), "fault %lu: %s; policy restart: %u restarts within %u s already, stopping",
        (unsigned long)p->fault.count, what, p->fault.max_restarts, (unsigned)p->fault.window_s);
    stop_down(v, why);
}

enum part_cpu_on part_cpu_on(struct vcpu *v, unsigned cpu, uint64_t entry, uint64_t ctx)
{
    struct partition *p = v->part;
    struct vcpu *t = &hyp_vcpu[cpu];
    enum part_cpu_on ret;
    spinlock_t *lock = cpus_lock_of(p);
    spin_lock(lock);
    if (p->going_down || p->state != PART_RUNNING) {
        ret = CPU_ON_REFUSED; /* the caller is about to stop with its partition */
    } else if (t->power == VCPU_ON) {
        ret = CPU_ON_ALREADY;
    } else if (t->power == VCPU_ON_PENDING) {
        ret = CPU_ON_PENDING;
    } else {
        t->on_entry = entry;
        t->on_ctx = ctx;
        set_power(t, VCPU_ON_PENDING); /* release: publishes the entry and context */
        ret = CPU_ON_STARTED;
    }
    spin_unlock(lock);
    if (ret == CPU_ON_STARTED) {
        vgic_kick(t);
    }
    return ret;
}

enum vcpu_power part_cpu_power(const struct partition *p, unsigned cpu)
{
    return get_power(part_vcpu(p, cpu));
}

void part_cpu_off(struct vcpu *v)
{
    struct partition *p = v->part;
    spinlock_t *lock = cpus_lock_of(p);
    bool others = false;
    spin_lock(lock);
    for (unsigned c = 0; c < HYP_MAX_CPUS; c++) {
        const struct vcpu *t = &hyp_vcpu[c];
        others |= ((p->cpu_mask >> c) & 1u) != 0 && c != v->cpu && t->power != VCPU_OFF && !t->leaving;
    }
    /* Counted as gone from here, so that of two CPUs turning off at once, one is the last (and stops
     * the partition) rather than both leaving it running with no CPU on. */
    v->leaving = others;
    spin_unlock(lock);
    if (!others) {
        part_stop(v, "powered off (PSCI)"); /* its last CPU */
    }
    cpu_turn_off(v);
    vgic_levels_changed(p, NULL); /* level sources routed here go to a CPU that is on */
    cpu_wait(v);
}

void part_cpu_poll(struct vcpu *v)
{
    if ((__atomic_load_n(&v->requests, __ATOMIC_ACQUIRE) & VCPU_REQ_STOP) != 0) {
        cpu_stopped(v);
    }
}
