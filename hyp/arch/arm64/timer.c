/*
 * The EL2 physical timer, the hypervisor's own tick.
 */
#include "arch/timer.h"

#include "arm64/sysreg.h"

void arch_hyp_timer_arm(unsigned hz)
{
    ARCH_WRITE_SYSREG(cnthp_tval_el2, (ARCH_READ_SYSREG(cntfrq_el0) & CNTFRQ_MASK) / hz);
    ARCH_WRITE_SYSREG(cnthp_ctl_el2, CNT_CTL_ENABLE); /* enabled, not masked */
}

void arch_hyp_timer_stop(void)
{
    ARCH_WRITE_SYSREG(cnthp_ctl_el2, 0);
}
