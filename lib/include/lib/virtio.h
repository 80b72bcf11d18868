/*
 * Virtio definitions (OASIS virtio 1.1): the virtio-mmio transport's registers (version 2, the modern
 * interface), the device status and feature bits, the split virtqueue's layout, and the console device's
 * configuration and control messages. Definitions only; the hypervisor's V-Bus device (hyp/core/vbus.c
 * on the transport of hyp/core/vmmio.c, hyp/core/vchan.c, hyp/core/virtq.c) and the test guests use them.
 *
 * Every field in guest memory and in the registers is little-endian (VIRTIO_F_VERSION_1), as both
 * images are.
 */
#ifndef LIB_VIRTIO_H
#define LIB_VIRTIO_H

#include <stdint.h>

/* virtio-mmio registers: 32-bit, aligned (the configuration space from VIRTIO_MMIO_CONFIG excepted). */
#define VIRTIO_MMIO_MAGIC_VALUE         0x000u /* "virt" */
#define VIRTIO_MMIO_VERSION             0x004u /* 2: the modern interface */
#define VIRTIO_MMIO_DEVICE_ID           0x008u
#define VIRTIO_MMIO_VENDOR_ID           0x00cu
#define VIRTIO_MMIO_DEVICE_FEATURES     0x010u
#define VIRTIO_MMIO_DEVICE_FEATURES_SEL 0x014u
#define VIRTIO_MMIO_DRIVER_FEATURES     0x020u
#define VIRTIO_MMIO_DRIVER_FEATURES_SEL 0x024u
#define VIRTIO_MMIO_QUEUE_SEL           0x030u
#define VIRTIO_MMIO_QUEUE_NUM_MAX       0x034u
#define VIRTIO_MMIO_QUEUE_NUM           0x038u
#define VIRTIO_MMIO_QUEUE_READY         0x044u
#define VIRTIO_MMIO_QUEUE_NOTIFY        0x050u
#define VIRTIO_MMIO_INTERRUPT_STATUS    0x060u
#define VIRTIO_MMIO_INTERRUPT_ACK       0x064u
#define VIRTIO_MMIO_STATUS              0x070u
#define VIRTIO_MMIO_QUEUE_DESC_LOW      0x080u
#define VIRTIO_MMIO_QUEUE_DESC_HIGH     0x084u
#define VIRTIO_MMIO_QUEUE_DRIVER_LOW    0x090u /* the available ring */
#define VIRTIO_MMIO_QUEUE_DRIVER_HIGH   0x094u
#define VIRTIO_MMIO_QUEUE_DEVICE_LOW    0x0a0u /* the used ring */
#define VIRTIO_MMIO_QUEUE_DEVICE_HIGH   0x0a4u
#define VIRTIO_MMIO_SHM_SEL             0x0acu
#define VIRTIO_MMIO_SHM_LEN_LOW         0x0b0u /* all ones: no such shared memory region */
#define VIRTIO_MMIO_SHM_LEN_HIGH        0x0b4u
#define VIRTIO_MMIO_SHM_BASE_LOW        0x0b8u
#define VIRTIO_MMIO_SHM_BASE_HIGH       0x0bcu
#define VIRTIO_MMIO_CONFIG_GENERATION   0x0fcu
#define VIRTIO_MMIO_CONFIG              0x100u /* the device-specific configuration space */
#define VIRTIO_MMIO_SIZE                0x200u /* the transport's register window */

#define VIRTIO_MMIO_MAGIC          0x74726976u /* "virt" read as a little-endian word */
#define VIRTIO_MMIO_VERSION_MODERN 2u

/* InterruptStatus / InterruptACK bits. */
#define VIRTIO_MMIO_INT_VRING  0x1u /* a used buffer was returned */
#define VIRTIO_MMIO_INT_CONFIG 0x2u /* the configuration changed (or the device needs a reset) */

/* Device status bits: the driver sets them in this order; 0 resets the device. */
#define VIRTIO_STATUS_ACKNOWLEDGE        0x01u
#define VIRTIO_STATUS_DRIVER             0x02u
#define VIRTIO_STATUS_DRIVER_OK          0x04u
#define VIRTIO_STATUS_FEATURES_OK        0x08u
#define VIRTIO_STATUS_DEVICE_NEEDS_RESET 0x40u /* set by the device only */
#define VIRTIO_STATUS_FAILED             0x80u

/* Feature bits (bit numbers). */
#define VIRTIO_F_INDIRECT_DESC       28u
#define VIRTIO_F_EVENT_IDX           29u
#define VIRTIO_F_VERSION_1           32u
#define VIRTIO_CONSOLE_F_SIZE        0u
#define VIRTIO_CONSOLE_F_MULTIPORT   1u
#define VIRTIO_CONSOLE_F_EMERG_WRITE 2u

#define VIRTIO_ID_CONSOLE 3u

/* Split virtqueue (virtio 1.1, 2.6): descriptor table, available ring (driver area), used ring (device
 * area). Alignment: 16, 2 and 4 bytes. The queue size is a power of two, at most 32768. */
#define VIRTQ_DESC_F_NEXT          0x1u
#define VIRTQ_DESC_F_WRITE         0x2u /* the device writes the buffer (else reads it) */
#define VIRTQ_DESC_F_INDIRECT      0x4u
#define VIRTQ_AVAIL_F_NO_INTERRUPT 0x1u
#define VIRTQ_USED_F_NO_NOTIFY     0x1u
#define VIRTQ_SIZE_MAX             32768u
#define VIRTQ_DESC_ALIGN           16u
#define VIRTQ_AVAIL_ALIGN          2u
#define VIRTQ_USED_ALIGN           4u

struct virtq_desc {
    uint64_t addr; /* guest-physical (IPA) */
    uint32_t len;
    uint16_t flags;
    uint16_t next;
};

struct virtq_avail {
    uint16_t flags;
    uint16_t idx; /* where the driver puts the next entry (free-running, mod 2^16) */
    uint16_t ring[];
};

struct virtq_used_elem {
    uint32_t id;  /* head descriptor of the chain */
    uint32_t len; /* bytes the device wrote into the chain */
};

struct virtq_used {
    uint16_t flags;
    uint16_t idx;
    struct virtq_used_elem ring[];
};

/* Bytes of each area for a queue of n entries (no event-index fields: VIRTIO_F_EVENT_IDX not offered). */
#define VIRTQ_DESC_BYTES(n)  (16u * (uint64_t)(n))
#define VIRTQ_AVAIL_BYTES(n) (4u + 2u * (uint64_t)(n))
#define VIRTQ_USED_BYTES(n)  (4u + 8u * (uint64_t)(n))

_Static_assert(sizeof(struct virtq_desc) == 16, "descriptor layout");
_Static_assert(sizeof(struct virtq_used_elem) == 8, "used element layout");

/* Console device (virtio 1.1, 5.3). Configuration space: */
#define VIRTIO_CONSOLE_CFG_COLS         0u /* le16 */
#define VIRTIO_CONSOLE_CFG_ROWS         2u /* le16 */
#define VIRTIO_CONSOLE_CFG_MAX_NR_PORTS 4u /* le32, with VIRTIO_CONSOLE_F_MULTIPORT */
#define VIRTIO_CONSOLE_CFG_EMERG_WR     8u /* le32, with VIRTIO_CONSOLE_F_EMERG_WRITE */
#define VIRTIO_CONSOLE_CFG_SIZE         12u

/* Queues with MULTIPORT: port 0's receiveq and transmitq, the control receiveq and transmitq, then the
 * receiveq and transmitq of ports 1, 2, ... "Receive" is the driver's view: device -> driver. */
#define VIRTIO_CONSOLE_CTRL_RX 2u
#define VIRTIO_CONSOLE_CTRL_TX 3u

/* A control message (both directions): PORT_NAME's name follows it, without a NUL. */
struct virtio_console_control {
    uint32_t id; /* port number; VIRTIO_CONSOLE_BAD_ID for device-wide events */
    uint16_t event;
    uint16_t value;
};

_Static_assert(sizeof(struct virtio_console_control) == 8, "control message layout");

#define VIRTIO_CONSOLE_BAD_ID        0xffffffffu
#define VIRTIO_CONSOLE_DEVICE_READY  0u /* driver -> device: value 1 ready, 0 failed */
#define VIRTIO_CONSOLE_DEVICE_ADD    1u /* device -> driver: a port exists (Linux: PORT_ADD) */
#define VIRTIO_CONSOLE_DEVICE_REMOVE 2u
#define VIRTIO_CONSOLE_PORT_READY    3u /* driver -> device: value 1 port set up, 0 failed */
#define VIRTIO_CONSOLE_CONSOLE_PORT  4u /* device -> driver: the port is a console (hvc) */
#define VIRTIO_CONSOLE_RESIZE        5u
#define VIRTIO_CONSOLE_PORT_OPEN     6u /* both ways: value 1 opened, 0 closed */
#define VIRTIO_CONSOLE_PORT_NAME     7u /* device -> driver: the name follows the message */

#endif /* LIB_VIRTIO_H */
