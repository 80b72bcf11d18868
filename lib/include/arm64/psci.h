/*
 * PSCI function IDs and return codes (Arm DEN 0022, SMC32/SMC64 calling convention). Definitions only.
 */
#ifndef ARM64_PSCI_H
#define ARM64_PSCI_H

#define PSCI_VERSION          0x84000000u
#define PSCI_CPU_OFF          0x84000002u
#define PSCI_CPU_ON_32        0x84000003u
#define PSCI_CPU_ON_64        0xc4000003u
#define PSCI_AFFINITY_INFO_32 0x84000004u
#define PSCI_AFFINITY_INFO_64 0xc4000004u
#define PSCI_SYSTEM_OFF       0x84000008u
#define PSCI_SYSTEM_RESET     0x84000009u
#define PSCI_FEATURES         0x8400000au
#define PSCI_SYSTEM_RESET2_32 0x84000012u /* PSCI 1.1 */
#define PSCI_SYSTEM_RESET2_64 0xc4000012u

/* PSCI_VERSION's answer: major in [31:16], minor in [15:0]. */
#define PSCI_VERSION_1_0 0x10000
#define PSCI_VERSION_1_1 0x10001

/* SYSTEM_RESET2 reset types: bit 31 clear is architectural (0 = warm reset, the only one defined),
 * bit 31 set is vendor-specific. */
#define PSCI_RESET2_WARM   0x0u
#define PSCI_RESET2_VENDOR 0x80000000u
/* rtmux's vendor reset type: "this partition hit a fatal error", with a cookie the partition chooses
 * (the rtos passes its exception syndrome). The hypervisor applies the partition's fault policy;
 * firmware that does not know the type refuses it (INVALID_PARAMETERS), so a caller falls back to
 * SYSTEM_OFF. */
#define PSCI_RESET2_RTMUX_FATAL (PSCI_RESET2_VENDOR | 0x1u)

#define PSCI_SUCCESS         0
#define PSCI_NOT_SUPPORTED   (-1)
#define PSCI_INVALID_PARAMS  (-2)
#define PSCI_DENIED          (-3)
#define PSCI_ALREADY_ON      (-4)
#define PSCI_ON_PENDING      (-5)
#define PSCI_INVALID_ADDRESS (-9)

/* AFFINITY_INFO states. */
#define PSCI_AFFINITY_ON         0
#define PSCI_AFFINITY_OFF        1
#define PSCI_AFFINITY_ON_PENDING 2

#endif /* ARM64_PSCI_H */
