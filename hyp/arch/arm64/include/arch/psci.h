/*
 * The PSCI a partition sees (arch/arm64/psci.c): HVC, or SMC trapped by HCR_EL2.TSC. It never reaches
 * firmware: a partition may act only on itself.
 */
#ifndef HYP_ARCH_PSCI_H
#define HYP_ARCH_PSCI_H

struct vcpu;

/* Serves the call in v's x0..x3; the result goes to x0 (or the partition stops or restarts). */
void psci_guest_call(struct vcpu *v);

#endif /* HYP_ARCH_PSCI_H */
