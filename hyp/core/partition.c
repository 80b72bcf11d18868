/*
 * Partitions: stage-2 set-up, loading from the pristine payload, entering at EL1, stopping, resetting.
 */
#include "arch/cpu.h"
#include "hyp/hyp.h"
#include "lib/string.h"

/* 39-bit IPA, start at level 1 (SL0=1), WB walks, inner shareable, 4 KiB, 40-bit PA, RES1 bit 31. */
#define VTCR_VALUE (25u | (1u << 6) | (1u << 8) | (1u << 10) | (3u << 12) | (2u << 16) | (1u << 31))

static spinlock_t part_lock;

static uint64_t ipa_to_pa(const struct partition *p, uint64_t ipa)
{
    return p->ram_pa + (ipa - p->ram_ipa);
}

/* SplitMix64's output function: a bijection, so distinct inputs give distinct, well-spread words. */
static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/*
 * The DTB's random seeds (drawn on the build host, see tools/rtmux/bundle.py) are XORed at every start
 * with a stream keyed by the counter and the start number, so a reset never replays the previous boot's
 * seeds. This keeps the host's randomness and makes each start different, but adds little entropy of
 * its own (the counter at a start is partly predictable): a board with a hardware RNG should feed it here.
 */
static void refresh_seeds(struct partition *p, uint8_t *dtb)
{
    uint64_t key = mix64(ARCH_RD(cntpct_el0) ^ (++p->starts << 48) ^ p->ram_pa);
    for (unsigned k = 0; k < HYP_MAX_SEEDS; k++) {
        uint8_t *seed = dtb + p->seed[k].off;
        uint64_t word = 0;
        for (uint32_t i = 0; i < p->seed[k].size; i++) {
            if (i % 8u == 0) {
                word = mix64(key + 0x9e3779b97f4a7c15ull * (k * 64u + i / 8u + 1u));
            }
            seed[i] ^= (uint8_t)(word >> (8u * (i % 8u)));
        }
    }
}

/*
 * Chunk of the partition loads between YIELD hints: 256 KiB is ~30k instructions. On hardware YIELD is
 * only a hint; under QEMU icount it ends the vCPU's time slice, which otherwise can run ~50 ms of guest
 * time with the hypervisor's timer masked (a Linux reset wipes 512 MiB) while the rtos CPU waits.
 */
#define LOAD_CHUNK (256u * 1024u)

static void copy_yielding(uint8_t *dst, const uint8_t *src, uint64_t size)
{
    for (uint64_t done = 0; done < size; done += LOAD_CHUNK) {
        size_t n = (size_t)(size - done < LOAD_CHUNK ? size - done : LOAD_CHUNK);
        if (src != NULL) {
            memcpy(dst + done, src + done, n);
        } else {
            memset(dst + done, 0, n);
        }
        __asm__ volatile("yield" : : : "memory");
    }
}

static void load_images(struct partition *p)
{
    /* Everything the partition had is wiped first: a reset must not leak the old run's state. */
    copy_yielding((uint8_t *)(uintptr_t)p->ram_pa, NULL, p->ram_size);
    copy_yielding((uint8_t *)(uintptr_t)ipa_to_pa(p, p->kernel_ipa), p->kernel, p->kernel_size);
    if (p->initrd_size != 0) {
        copy_yielding((uint8_t *)(uintptr_t)ipa_to_pa(p, p->initrd_ipa), p->initrd, p->initrd_size);
    }
    if (p->dtb_size != 0) {
        memcpy((void *)(uintptr_t)ipa_to_pa(p, p->dtb_ipa), p->dtb, p->dtb_size);
        refresh_seeds(p, (uint8_t *)(uintptr_t)ipa_to_pa(p, p->dtb_ipa));
    }
    __asm__ volatile("dsb sy\n\tic iallu\n\tdsb sy\n\tisb" : : : "memory");
}

void part_setup(struct partition *p)
{
    unsigned vmid = (unsigned)(p - hyp_part) + 1u;
    p->s2_root = s2_new_root();
    s2_map(p->s2_root, p->ram_ipa, p->ram_pa, p->ram_size, false);
    for (unsigned i = 0; i < p->ndev; i++) {
        s2_map(p->s2_root, p->dev[i].ipa, p->dev[i].pa, p->dev[i].size, true);
    }
    p->vttbr = (uint64_t)(uintptr_t)p->s2_root | ((uint64_t)vmid << 48);
    vuart_reset(p);
    load_images(p);
    p->state = PART_RUNNING;
    hyp_printf("rtmux: partition %s: CPUs 0x%lx, RAM IPA 0x%lx -> PA 0x%lx (%lu MiB), %u device ranges\n",
               p->name, (unsigned long)p->cpu_mask, (unsigned long)p->ram_ipa, (unsigned long)p->ram_pa,
               (unsigned long)(p->ram_size >> 20), p->ndev);
}

void part_enter(struct vcpu *v)
{
    struct partition *p = v->part;
    /* No HCR_EL2.FB: each CPU runs one partition's only vCPU and never another's, so a guest's local TLB
     * and I-cache maintenance only needs to reach this CPU; forcing it to broadcast would make Linux's
     * local flushes hit the rtos CPU as well. Set it once a partition spans several CPUs. */
    uint64_t hcr = HCR_VM | HCR_RW | HCR_TSC | HCR_BSU_IS;
    if (p->kind == PART_LINUX) {
        hcr |= HCR_IMO | HCR_FMO | HCR_AMO; /* interrupts through the virtual CPU interface */
    }
    /* The rtos takes physical interrupts at EL1 directly: IMO/FMO clear, no trap on its hot path. */
    ARCH_WR(vtcr_el2, VTCR_VALUE);
    ARCH_WR(vttbr_el2, p->vttbr);
    ARCH_WR(hcr_el2, hcr);
    ARCH_WR(cptr_el2, CPTR_EL2_RES1);
    ARCH_WR(hstr_el2, 0);
    ARCH_WR(cnthctl_el2, CNTHCTL_EL1PCTEN | CNTHCTL_EL1PCEN);
    ARCH_WR(cntvoff_el2, 0);
    ARCH_WR(vpidr_el2, ARCH_RD(midr_el1));
    ARCH_WR(vmpidr_el2, ARCH_RD(mpidr_el1));
    ARCH_WR(sctlr_el1, SCTLR_EL1_RES1);
    ARCH_WR(cpacr_el1, 0);
    ARCH_WR(vbar_el1, 0);
    arch_isb();
    __asm__ volatile("tlbi vmalls12e1\n\tdsb nsh\n\tisb" : : : "memory");
    for (unsigned i = 0; i < 31; i++) {
        v->guest.x[i] = 0;
    }
    v->guest.x[0] = p->dtb_size != 0 ? p->dtb_ipa : 0;
    v->guest.elr = p->entry_ipa;
    v->guest.spsr = SPSR_EL1H_MASKED;
    arch_guest_enter(&v->guest);
}

static bool any_running(void)
{
    for (unsigned i = 0; i < hyp_nparts; i++) {
        if (hyp_part[i].state == PART_RUNNING) {
            return true;
        }
    }
    return false;
}

void part_stop(struct vcpu *v, const char *why)
{
    struct partition *p = v->part;
    spin_lock(&part_lock);
    p->state = PART_OFF;
    hyp_printf("rtmux: partition %s stopped: %s\n", p->name, why);
    bool last = !any_running();
    spin_unlock(&part_lock);
    if (last) {
        con_drain(true); /* the drain CPU may be parked: write out what is left from here */
        hyp_printf("rtmux: no partition left running; system off\n");
        psci_fw_system_off();
    }
    if ((int)v->cpu == con_drain_cpu) {
        /* This CPU still carries the console (input, and the other partitions' output): keep taking
         * interrupts at EL2; the stopped partition's own interrupts are dropped (vgic.c). */
        ARCH_WR(hcr_el2, HCR_RW | HCR_IMO | HCR_FMO);
        arch_isb();
        __asm__ volatile("msr daifclr, #2" : : : "memory");
    } else {
        ARCH_WR(hcr_el2, HCR_RW); /* nothing of the partition's can reach this CPU any more */
    }
    for (;;) {
        __asm__ volatile("wfi");
    }
}

void part_reset(struct vcpu *v)
{
    struct partition *p = v->part;
    hyp_printf("rtmux: partition %s: reset requested; restarting from its pristine images\n", p->name);
    vuart_reset(p);
    load_images(p);
    part_enter(v);
}
