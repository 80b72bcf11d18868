/*
 * Support for the bare-metal test guests booted as a partition (tests/guests/): console output through
 * the partition's PL011, boot arguments from the DTB's /chosen/bootargs, PSCI calls, exception hooks.
 * Everything a guest prints that a test matches is computed by the guest (counts, results).
 */
#ifndef GUEST_H
#define GUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What the EL1 vectors save (start.S, FRAME_SIZE). A handler may change elr/spsr and registers. */
struct guest_frame {
    uint64_t x[31];
    uint64_t elr;
    uint64_t spsr;
    uint64_t esr;
};

_Static_assert(sizeof(struct guest_frame) == 272, "start.S: FRAME_SIZE");

/* Each guest defines these. guest_main runs after the boot arguments are parsed. A sync exception
 * handler returns true when it dealt with the exception (the frame says where to resume). */
void guest_main(void);
bool guest_on_sync(struct guest_frame *f);
void guest_on_irq(struct guest_frame *f);

/* Called from start.S. */
void guest_start(uint64_t dtb);
/* A further CPU's C entry (guest_secondary_entry, started with PSCI CPU_ON): ctx is the context id
 * given to CPU_ON; its low 2 bits chose the CPU's stack (GUEST_CPU_SLOTS of them). A guest that starts
 * further CPUs defines it; the default halts the CPU. */
void guest_secondary(uint64_t ctx);
void guest_secondary_entry(void);
#define GUEST_CPU_SLOTS 4u
void guest_sync(struct guest_frame *f);
void guest_irq(struct guest_frame *f);
void guest_serror(struct guest_frame *f);
void guest_bad_exception(struct guest_frame *f);

void guest_putc(char c);
void guest_puts(const char *s);
/* %s %c %d %u %x %lu %ld %lx and %%; no width or flags. */
void guest_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The value of `name=` in the boot arguments into buf; false when absent. */
bool guest_arg(const char *name, char *buf, size_t size);
uint64_t guest_arg_u64(const char *name, uint64_t dflt);

int64_t guest_hvc(uint64_t fn, uint64_t a1, uint64_t a2, uint64_t a3);
int64_t guest_smc(uint64_t fn, uint64_t a1, uint64_t a2, uint64_t a3);
void __attribute__((noreturn)) guest_power_off(void);
void __attribute__((noreturn)) guest_halt(void);

/* This CPU's redistributor frame (RD_base; its SGI_base frame follows at GICR_SGI_OFFSET), found by its
 * affinity among the frames up to the one marked last; halts the guest when there is none. */
uintptr_t guest_gicr(void);

uint64_t guest_counter(void);
uint64_t guest_counter_hz(void);
uint64_t guest_random(void); /* xorshift64*, seeded from the counter at boot */

int guest_strcmp(const char *a, const char *b);
void *memset(void *d, int c, size_t n);
void *memcpy(void *d, const void *s, size_t n);

#define GUEST_READ_SYSREG(reg)                        \
    ({                                                \
        uint64_t v_;                                  \
        __asm__ volatile("mrs %0, " #reg : "=r"(v_)); \
        v_;                                           \
    })
#define GUEST_WRITE_SYSREG(reg, v) __asm__ volatile("msr " #reg ", %0" : : "r"((uint64_t)(v)) : "memory")

#endif /* GUEST_H */
