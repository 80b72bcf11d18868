/*
 * System-level services: boot arguments, fault policy, shutdown.
 */
#ifndef RTOS_SYSTEM_H
#define RTOS_SYSTEM_H

#include <stdint.h>

#include "rtos/kobj.h"

#define RT_VERSION "0.1.0"

/* The application's entry point, called in the "main" thread (priority RT_MAIN_PRIO). */
#define RT_MAIN_PRIO 128
void rt_main(void);

/* Value of key in the boot arguments (/chosen/bootargs, "k1=v1 k2=v2"), copied into buf;
 * returns 1 if found, 0 if not. */
int rt_bootarg(const char *key, char *buf, unsigned size);
/* Reports on the console every boot argument whose key is not in the NULL-terminated list `known`;
 * returns how many there were. Applications call it once so that a typo never passes silently. */
int rt_bootargs_check(const char *const *known);
/* Unsigned decimal boot argument, or `dflt` if absent; reports a malformed value on the console. */
uint64_t rt_bootarg_u64(const char *key, uint64_t dflt);

/* Property `name` of the node at `path` ("/rtmux-services") in the DTB the rtos booted with: its bytes
 * (read-only, valid for the whole run) and their count in *len, or NULL if absent (always bare metal
 * without a DTB). Strings and string lists are as the DTB holds them, NUL-terminated each. */
const void *rt_dt_prop(const char *path, const char *name, uint32_t *len);

/* What went wrong, handed to the fault hook. */
enum rt_fault_kind {
    RT_FAULT_EXCEPTION = 1,     /* synchronous exception (abort, undefined instruction, ...) */
    RT_FAULT_STACK_OVERFLOW = 2 /* guard pattern at the bottom of a thread stack was overwritten */
};

struct rt_fault {
    enum rt_fault_kind kind;
    rt_thread_t *thread; /* thread that faulted, NULL in an interrupt handler */
    uint64_t esr, far, elr;
};

enum rt_fault_action {
    RT_FAULT_HALT = 0,       /* stop the system (default) */
    RT_FAULT_KILL_THREAD = 1 /* end the faulting thread, keep the system running */
};

/*
 * Installs a fault hook (NULL restores the default: halt). The kernel has already printed the fault.
 * A fault inside an interrupt handler or the idle thread always halts.
 */
void rt_set_fault_hook(enum rt_fault_action (*hook)(const struct rt_fault *f));

/* Prints "rtos: system off" and powers off (the partition, under rtmux). */
void rt_system_off(void) __attribute__((noreturn));

/* Prints the reason and halts (powering off) after a fatal error. */
void rt_panic(const char *reason) __attribute__((noreturn));

#endif /* RTOS_SYSTEM_H */
