/*
 * The partitions' PSCI (hyp/arch/arm64/psci.c) against a stand-in lifecycle: which CPU a call names,
 * what it may do to it, and the error of every refusal. Partition L (Linux-like) has CPUs 1, 2 and 3
 * and RAM at IPA 0x49000000 (16 MiB); R has CPU 0; CPUs 4..7 exist in no partition.
 */
#include <setjmp.h>
#include <string.h>

#include "arch/psci.h"
#include "arm64/psci.h"
#include "check.h"
#include "hyp/lifecycle.h"
#include "hyp/partition.h"
#include "hyp/vcpu.h"
#include "hyp_stubs.h"

struct vcpu hyp_vcpu[HYP_MAX_CPUS];
struct vcpu hyp_rtos_vcpu[HYP_MAX_CPUS]; /* no CPU is shared here */
struct partition hyp_part[HYP_MAX_PARTITIONS];
unsigned hyp_nparts;

#define RAM_IPA  0x49000000ull
#define RAM_SIZE 0x01000000ull

/* The stand-in lifecycle: CPU_ON's decision from each CPU's power state, and a record of each call. */
static struct {
    unsigned on_calls, on_cpu;
    uint64_t on_entry, on_ctx;
    const char *ended; /* "off", "stop", "reset", "fault": a call that does not return */
} life;
static jmp_buf ended_jmp;

enum part_cpu_on part_cpu_on(struct vcpu *v, unsigned cpu, uint64_t entry, uint64_t ctx)
{
    (void)v;
    life.on_calls++;
    life.on_cpu = cpu, life.on_entry = entry, life.on_ctx = ctx;
    switch (hyp_vcpu[cpu].power) {
    case VCPU_ON:
        return CPU_ON_ALREADY;
    case VCPU_ON_PENDING:
        return CPU_ON_PENDING;
    default:
        hyp_vcpu[cpu].power = VCPU_ON_PENDING;
        return CPU_ON_STARTED;
    }
}

enum vcpu_power part_cpu_power(const struct partition *p, unsigned cpu)
{
    (void)p;
    return (enum vcpu_power)hyp_vcpu[cpu].power;
}

void part_cpu_off(struct vcpu *v)
{
    (void)v;
    life.ended = "off";
    longjmp(ended_jmp, 1);
}

void part_stop(struct vcpu *v, const char *why)
{
    (void)v, (void)why;
    life.ended = "stop";
    longjmp(ended_jmp, 1);
}

void part_reset(struct vcpu *v)
{
    (void)v;
    life.ended = "reset";
    longjmp(ended_jmp, 1);
}

void part_fault(struct vcpu *v, const char *what)
{
    (void)v, (void)what;
    life.ended = "fault";
    longjmp(ended_jmp, 1);
}

/* One call by v; returns x0 (the answer), or -100 when the call did not return (life.ended says why). */
static int64_t call(struct vcpu *v, uint64_t fn, uint64_t a1, uint64_t a2, uint64_t a3)
{
    v->guest.x[0] = fn, v->guest.x[1] = a1, v->guest.x[2] = a2, v->guest.x[3] = a3;
    life.ended = NULL;
    if (setjmp(ended_jmp) != 0) {
        return -100;
    }
    psci_guest_call(v);
    return (int64_t)v->guest.x[0];
}

static void setup(void)
{
    memset(hyp_part, 0, sizeof(hyp_part));
    memset(hyp_vcpu, 0, sizeof(hyp_vcpu));
    memset(&life, 0, sizeof(life));
    hyp_nparts = 2;
    struct partition *l = &hyp_part[0], *r = &hyp_part[1];
    l->name = "L", l->kind = PART_LINUX, l->cpu_mask = 0xe, l->ram_ipa = RAM_IPA, l->ram_size = RAM_SIZE;
    r->name = "R", r->kind = PART_RTOS, r->cpu_mask = 0x1;
    for (unsigned c = 0; c < HYP_MAX_CPUS; c++) {
        hyp_vcpu[c].cpu = c;
        hyp_vcpu[c].mpidr = c;
        hyp_vcpu[c].part = c == 0 ? r : c <= 3 ? l : NULL;
    }
    hyp_vcpu[0].power = VCPU_ON;
    hyp_vcpu[1].power = VCPU_ON;
}

static void test_cpu_on(void)
{
    setup();
    struct vcpu *v = &hyp_vcpu[1];
    const uint64_t entry = RAM_IPA + 0x80000;
    /* Its own CPU that is off: started there, with the entry and context as given. */
    CHECK(call(v, PSCI_CPU_ON_64, 2, entry, 0x1234567890ull) == PSCI_SUCCESS);
    CHECK(life.on_cpu == 2 && life.on_entry == entry && life.on_ctx == 0x1234567890ull);
    CHECK(call(v, PSCI_CPU_ON_64, 2, entry, 0) == PSCI_ON_PENDING);
    hyp_vcpu[2].power = VCPU_ON;
    CHECK(call(v, PSCI_CPU_ON_64, 2, entry, 0) == PSCI_ALREADY_ON);
    CHECK(call(v, PSCI_CPU_ON_64, 1, entry, 0) == PSCI_ALREADY_ON); /* itself */
    /* SMC32: every argument 32-bit; the upper halves are ignored. */
    CHECK(call(v, PSCI_CPU_ON_32, 0xffffffff00000003ull, 0xabcd000000000000ull | entry,
               0x5555000000000007ull) == PSCI_SUCCESS);
    CHECK(life.on_cpu == 3 && life.on_entry == entry && life.on_ctx == 7);
    /* Refused before the lifecycle is asked. */
    unsigned calls = life.on_calls;
    CHECK(call(v, PSCI_CPU_ON_64, 0, entry, 0) == PSCI_DENIED);                    /* the rtos's CPU */
    CHECK(call(v, PSCI_CPU_ON_64, 5, entry, 0) == PSCI_INVALID_PARAMS);            /* a CPU nobody has */
    CHECK(call(v, PSCI_CPU_ON_64, 9, entry, 0) == PSCI_INVALID_PARAMS);            /* beyond the board */
    CHECK(call(v, PSCI_CPU_ON_64, 0x102, entry, 0) == PSCI_INVALID_PARAMS);        /* Aff1 = 1 */
    CHECK(call(v, PSCI_CPU_ON_64, 0x1000002ull, entry, 0) == PSCI_INVALID_PARAMS); /* bit 24: not affinity */
    CHECK(call(v, PSCI_CPU_ON_64, (1ull << 32) | 2u, entry, 0) == PSCI_INVALID_PARAMS); /* Aff3 = 1 */
    hyp_vcpu[2].power = VCPU_OFF;
    CHECK(call(v, PSCI_CPU_ON_64, 2, RAM_IPA - 4u, 0) == PSCI_INVALID_ADDRESS);
    CHECK(call(v, PSCI_CPU_ON_64, 2, RAM_IPA + RAM_SIZE, 0) == PSCI_INVALID_ADDRESS);
    CHECK(call(v, PSCI_CPU_ON_64, 2, 0x48000000ull, 0) == PSCI_INVALID_ADDRESS); /* another's RAM */
    CHECK(call(v, PSCI_CPU_ON_64, 2, entry + 2u, 0) == PSCI_INVALID_ADDRESS);    /* unaligned */
    CHECK(call(v, PSCI_CPU_ON_64, 2, ~0ull, 0) == PSCI_INVALID_ADDRESS);
    CHECK(life.on_calls == calls);
    /* The first and last instruction of the RAM are fine. */
    CHECK(call(v, PSCI_CPU_ON_64, 2, RAM_IPA, 0) == PSCI_SUCCESS);
    hyp_vcpu[2].power = VCPU_OFF;
    CHECK(call(v, PSCI_CPU_ON_64, 2, RAM_IPA + RAM_SIZE - 4u, 0) == PSCI_SUCCESS);
    /* The rtos partition cannot start Linux's CPUs either. */
    hyp_vcpu[2].power = VCPU_OFF;
    CHECK(call(&hyp_vcpu[0], PSCI_CPU_ON_64, 2, entry, 0) == PSCI_DENIED);
}

static void test_affinity_info_and_power(void)
{
    setup();
    struct vcpu *v = &hyp_vcpu[1];
    hyp_vcpu[3].power = VCPU_ON_PENDING;
    CHECK(call(v, PSCI_AFFINITY_INFO_64, 1, 0, 0) == PSCI_AFFINITY_ON);
    CHECK(call(v, PSCI_AFFINITY_INFO_64, 2, 0, 0) == PSCI_AFFINITY_OFF);
    CHECK(call(v, PSCI_AFFINITY_INFO_32, 3, 0, 0) == PSCI_AFFINITY_ON_PENDING);
    CHECK(call(v, PSCI_AFFINITY_INFO_64, 0, 0, 0) == PSCI_INVALID_PARAMS); /* not its CPU */
    CHECK(call(v, PSCI_AFFINITY_INFO_64, 6, 0, 0) == PSCI_INVALID_PARAMS);
    CHECK(call(v, PSCI_AFFINITY_INFO_64, 2, 1, 0) == PSCI_INVALID_PARAMS); /* a cluster's level */
    CHECK(call(v, PSCI_FEATURES, PSCI_CPU_ON_64, 0, 0) == PSCI_SUCCESS);
    CHECK(call(v, PSCI_FEATURES, PSCI_AFFINITY_INFO_32, 0, 0) == PSCI_SUCCESS);
    /* CPU_OFF, SYSTEM_OFF, SYSTEM_RESET end in the lifecycle; a warm SYSTEM_RESET2 is a fault. */
    CHECK(call(v, PSCI_CPU_OFF, 0, 0, 0) == -100 && strcmp(life.ended, "off") == 0);
    CHECK(call(v, PSCI_SYSTEM_OFF, 0, 0, 0) == -100 && strcmp(life.ended, "stop") == 0);
    CHECK(call(v, PSCI_SYSTEM_RESET, 0, 0, 0) == -100 && strcmp(life.ended, "reset") == 0);
    CHECK(call(v, PSCI_SYSTEM_RESET2_64, PSCI_RESET2_WARM, 0, 0) == -100 && strcmp(life.ended, "fault") == 0);
    CHECK(call(v, PSCI_SYSTEM_RESET2_64, 7, 0, 0) == PSCI_INVALID_PARAMS && life.ended == NULL);
}

int main(void)
{
    test_cpu_on();
    test_affinity_info_and_power();
    UNIT_DONE("hyp psci");
}
