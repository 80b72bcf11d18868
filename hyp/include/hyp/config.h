/*
 * System configuration: which partitions exist and what they own.
 */
#ifndef HYP_CONFIG_H
#define HYP_CONFIG_H

#include "hyp/hyp.h"

/*
 * Reads the configuration blob that ./rtmux appends to the hypervisor image (right after its BSS, at
 * the linker symbol _end; layout in docs/configuration.md), fills parts[] (at most max) and returns the
 * number of partitions. An absent, corrupt or inconsistent blob stops the machine with a message that
 * names the problem: the hypervisor never guesses a partition table.
 */
unsigned config_load(struct partition *parts, unsigned max);

/* Console settings from the blob. */
extern bool config_console_tags;
extern uint8_t config_console_escape;
extern unsigned config_console_focus;

#endif /* HYP_CONFIG_H */
