/*
 * Shared-core mode (core/share.c): a CPU that an rtos partition shares with a Linux partition. The rtos
 * runs whenever it has work; Linux runs there only while the rtos is idle (lifecycle.c decides, at the
 * rtos's idle WFI and at every rtos interrupt that arrives while Linux runs; arch/arm64/guest.c switches
 * the EL1 state). This module keeps the books: which world has each shared CPU, the time each got, the
 * switches and their cost, and how long Linux waited while it wanted the CPU (reported past the rtos
 * partition's starved_ms).
 */
#ifndef HYP_SHARE_H
#define HYP_SHARE_H

#include <stdbool.h>
#include <stdint.h>

struct vcpu;

/* Who has a shared CPU: the rtos, Linux, or neither (the rtos idle and Linux off: the hypervisor waits). */
enum share_world { WORLD_RTOS = 0, WORLD_LINUX, WORLD_NONE, SHARE_WORLDS };

/* Sets up the books of every shared CPU (after the configuration is read). */
void share_init(void);
/* The rtos's first entry on shared CPU cpu: its books start now (the hypervisor's own start-up, which
 * copies every image, is nobody's time). */
void share_begin(unsigned cpu);
/* Whether CPU cpu is shared (an rtos partition has it with Linux). */
bool share_cpu(unsigned cpu);
/* A switch of CPU cpu to world `to` begins; t0 is the counter when the hypervisor was entered for it.
 * Returns where the world's entry stores the counter once its state is loaded (the switch's cost is
 * that minus t0), or NULL when this switch is not timed (a world's first start). */
uint64_t *share_switch(unsigned cpu, enum share_world to, uint64_t t0, bool timed);
/* Linux's virtual CPU on cpu left the CPU because it stopped wanting it (off, stopped): not starving. */
void share_linux_gone(unsigned cpu);
/* The drain CPU's tick: reports a Linux starving now on a CPU whose rtos is busy (a shared CPU that is
 * not the drain CPU; on the drain CPU the report comes when the rtos next idles). */
void share_tick(void);
/* One line per shared CPU: time per world, switches, their average cost, the longest wait of Linux
 * (`rtmux: share cpu=N rtos=NAME linux=NAME ...`, tools/rtmux/formats/hyp_console.py). */
void share_report(void);

#endif /* HYP_SHARE_H */
