/*
 * The EL2 physical timer (arch/arm64/timer.c): the hypervisor's periodic tick on its console CPU.
 */
#ifndef HYP_ARCH_TIMER_H
#define HYP_ARCH_TIMER_H

/* Arms the next tick 1/hz s from now (and enables the timer). The interrupt is level: arming the next
 * deadline lowers it. */
void arch_hyp_timer_arm(unsigned hz);
void arch_hyp_timer_stop(void);

#endif /* HYP_ARCH_TIMER_H */
