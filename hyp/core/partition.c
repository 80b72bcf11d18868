/*
 * Partitions: stage-2 set-up and loading from the pristine payload.
 */
#include "hyp/partition.h"

#include "arch/cpu.h"
#include "arch/spinlock.h"
#include "arch/stage2.h"
#include "hyp/assert.h"
#include "hyp/printf.h"
#include "lib/string.h"

struct partition hyp_part[HYP_MAX_PARTITIONS];
unsigned hyp_nparts;

/* Every partition's line limit (its CPUs, and the console CPU for its output, cause lines at once). */
static spinlock_t lines_lock;

bool part_line_allowed(struct partition *p, uint64_t *suppressed)
{
    uint64_t period = arch_counter_hz(); /* one token back per second */
    bool allowed = false;
    spin_lock(&lines_lock);
    uint64_t earned = (arch_counter() - p->con.lines_stamp) / period;
    if (earned > 0) {
        p->con.lines_used = earned >= p->con.lines_used ? 0 : p->con.lines_used - (unsigned)earned;
        p->con.lines_stamp += earned * period;
    }
    if (p->con.lines_used >= PART_LINES_BURST) {
        p->con.lines_suppressed++;
    } else {
        p->con.lines_used++;
        *suppressed = p->con.lines_suppressed;
        p->con.lines_suppressed = 0;
        allowed = true;
    }
    spin_unlock(&lines_lock);
    return allowed;
}

static void lines_not_shown(const struct partition *p, uint64_t n)
{
    hyp_printf("rtmux: partition %s: %lu lines it caused were not shown (rate limit: %u at once, then one a "
               "second)\n",
               p->name, (unsigned long)n, PART_LINES_BURST);
}

void part_printf(struct partition *p, const char *fmt, ...)
{
    uint64_t suppressed = 0;
    if (!part_line_allowed(p, &suppressed)) {
        return;
    }
    if (suppressed != 0) {
        lines_not_shown(p, suppressed);
    }
    va_list ap;
    va_start(ap, fmt);
    (void)hyp_vprintf(fmt, ap);
    va_end(ap);
}

void part_lines_report(struct partition *p)
{
    spin_lock(&lines_lock);
    uint64_t n = p->con.lines_suppressed;
    p->con.lines_suppressed = 0;
    spin_unlock(&lines_lock);
    if (n != 0) {
        lines_not_shown(p, n);
    }
}

static uint64_t ipa_to_pa(const struct partition *p, uint64_t ipa)
{
    HYP_ASSERT(ipa >= p->ram_ipa && ipa - p->ram_ipa < p->ram_size); /* config_parse checked the images */
    return p->ram_pa + (ipa - p->ram_ipa);
}

/* SplitMix64's output function: a bijection, so distinct inputs give distinct, well-spread words. */
static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* SplitMix64's stream increment (2^64 / golden ratio). */
#define SPLITMIX_GAMMA 0x9e3779b97f4a7c15ull

/*
 * The DTB's random seeds (drawn on the build host, see tools/rtmux) are XORed at every start with a
 * stream keyed by the counter and the start number, so a reset never replays the previous boot's seeds.
 * This keeps the host's randomness and makes each start different, but adds little entropy of its own
 * (the counter at a start is partly predictable): a board with a hardware RNG should feed it here.
 */
static void refresh_seeds(struct partition *p, uint8_t *dtb)
{
    uint64_t key = mix64(arch_counter() ^ (++p->starts << 48) ^ p->ram_pa);
    for (unsigned k = 0; k < HYP_MAX_SEEDS; k++) {
        uint8_t *seed = dtb + p->seed[k].off;
        uint64_t word = 0;
        for (uint32_t i = 0; i < p->seed[k].size; i++) {
            if (i % 8u == 0) {
                word = mix64(key + SPLITMIX_GAMMA * (k * 64u + i / 8u + 1u));
            }
            seed[i] ^= (uint8_t)(word >> (8u * (i % 8u)));
        }
    }
}

/*
 * Chunk of the partition loads between YIELD hints: 256 KiB is ~10k instructions to zero (DC ZVA) and
 * ~130k to copy (doublewords). On hardware YIELD is only a hint; under QEMU icount it ends the vCPU's
 * time slice, which otherwise can run ~50 ms of guest time with the hypervisor's timer masked (a Linux
 * reset wipes 512 MiB) while the rtos CPU waits.
 */
#define LOAD_CHUNK (256u * 1024u)
/*
 * Piece between two calls of a load's hook (a Linux reload on a CPU it shares with the rtos, which looks
 * for a pending rtos interrupt there): 1 KiB is ~550 instructions to copy, ~50 to zero, so the rtos
 * waits well under a microsecond (icount) before the reload steps aside.
 */
#define LOAD_PIECE 1024u
_Static_assert(LOAD_CHUNK % LOAD_PIECE == 0, "the pieces make whole chunks");

struct load_hook {
    void (*fn)(void *ctx);
    void *ctx;
};

static void copy_yielding(uint8_t *dst, const uint8_t *src, uint64_t size, const struct load_hook *hook)
{
    uint64_t piece = hook->fn != NULL ? LOAD_PIECE : LOAD_CHUNK;
    for (uint64_t done = 0; done < size; done += piece) {
        size_t n = (size_t)(size - done < piece ? size - done : piece);
        if (src != NULL) {
            memcpy(dst + done, src + done, n);
        } else {
            arch_zero(dst + done, n);
        }
        arch_dcache_clean_inval_poc(dst + done, n);
        if ((done + n) % LOAD_CHUNK == 0 || done + n == size) {
            arch_yield();
        }
        if (hook->fn != NULL) {
            hook->fn(hook->ctx);
        }
    }
}

void part_load(struct partition *p, void (*between)(void *ctx), void *ctx)
{
    const struct load_hook hook = {between, ctx};
    /* Everything the partition had is wiped first: a reset must not leak the old run's state. Every
     * byte written is cleaned to the point of coherency, since the partition starts with its MMU off. */
    copy_yielding((uint8_t *)(uintptr_t)p->ram_pa, NULL, p->ram_size, &hook);
    copy_yielding((uint8_t *)(uintptr_t)ipa_to_pa(p, p->kernel.ipa), p->kernel.data, p->kernel.size, &hook);
    if (p->initrd.size != 0) {
        copy_yielding((uint8_t *)(uintptr_t)ipa_to_pa(p, p->initrd.ipa), p->initrd.data, p->initrd.size,
                      &hook);
    }
    if (p->dtb.size != 0) {
        uint8_t *dtb = (uint8_t *)(uintptr_t)ipa_to_pa(p, p->dtb.ipa);
        memcpy(dtb, p->dtb.data, p->dtb.size);
        if (!p->seeds_fixed) {
            refresh_seeds(p, dtb);
        }
        arch_dcache_clean_inval_poc(dtb, p->dtb.size);
    }
    arch_sync_icache();
    /* The wipe emptied the console ring (head = tail = 0); the drain may read it again. */
    p->con.ring_tail = 0;
    p->con.dropped = p->con.dropped_lines = 0;
    __atomic_store_n(&p->con.ring_on, p->con.ring != NULL, __ATOMIC_RELEASE);
}

void part_setup(struct partition *p)
{
    unsigned vmid = part_index(p) + 1u; /* VMID 0 is left unused */
    p->s2_root = s2_new_root();
    s2_map(p->s2_root, p->ram_ipa, p->ram_pa, p->ram_size, false);
    for (unsigned i = 0; i < p->ndev; i++) {
        s2_map(p->s2_root, p->dev[i].ipa, p->dev[i].pa, p->dev[i].size, true);
    }
    p->vttbr = s2_vttbr(p->s2_root, vmid);
    vuart_reset(&p->con.uart);
    part_load(p, NULL, NULL);
    p->state = PART_RUNNING;
    hyp_printf("rtmux: partition %s: CPUs 0x%lx, RAM IPA 0x%lx -> PA 0x%lx (%lu MiB), %u device ranges\n",
               p->name, (unsigned long)p->cpu_mask, (unsigned long)p->ram_ipa, (unsigned long)p->ram_pa,
               (unsigned long)(p->ram_size >> 20), p->ndev);
}

bool part_any_running(void)
{
    for (unsigned i = 0; i < hyp_nparts; i++) {
        if (hyp_part[i].state == PART_RUNNING) {
            return true;
        }
    }
    return false;
}

struct partition *part_of_cpu(unsigned cpu)
{
    for (unsigned i = 0; i < hyp_nparts; i++) {
        /* config_parse allows a CPU in two partitions only for an rtos that shares it with Linux. */
        if ((hyp_part[i].cpu_mask & (1ull << cpu)) != 0 && !hyp_part[i].share.rtos) {
            return &hyp_part[i];
        }
    }
    return NULL;
}

struct partition *part_rtos_sharing(unsigned cpu)
{
    for (unsigned i = 0; i < hyp_nparts; i++) {
        if ((hyp_part[i].cpu_mask & (1ull << cpu)) != 0 && hyp_part[i].share.rtos) {
            return &hyp_part[i];
        }
    }
    return NULL;
}

void part_share_init(void)
{
    for (unsigned i = 0; i < hyp_nparts; i++) {
        struct partition *r = &hyp_part[i];
        if (!r->share.rtos) {
            continue;
        }
        r->share.mask = r->cpu_mask;
        struct partition *l = part_of_cpu(part_boot_cpu(r));
        if (l != NULL) {
            l->share.mask |= r->cpu_mask;
        }
    }
}
