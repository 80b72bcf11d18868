/*
 * PSCI function IDs and return codes (Arm DEN 0022, SMC32/SMC64 calling convention). Definitions only.
 */
#ifndef ARM64_PSCI_H
#define ARM64_PSCI_H

#define PSCI_VERSION          0x84000000u
#define PSCI_CPU_OFF          0x84000002u
#define PSCI_CPU_ON_64        0xc4000003u
#define PSCI_AFFINITY_INFO_64 0xc4000004u
#define PSCI_SYSTEM_OFF       0x84000008u
#define PSCI_SYSTEM_RESET     0x84000009u
#define PSCI_FEATURES         0x8400000au

/* PSCI_VERSION's answer: major in [31:16], minor in [15:0]. */
#define PSCI_VERSION_1_0 0x10000

#define PSCI_SUCCESS        0
#define PSCI_NOT_SUPPORTED  (-1)
#define PSCI_INVALID_PARAMS (-2)
#define PSCI_DENIED         (-3)
#define PSCI_ALREADY_ON     (-4)

/* AFFINITY_INFO states. */
#define PSCI_AFFINITY_ON  0
#define PSCI_AFFINITY_OFF 1

#endif /* ARM64_PSCI_H */
