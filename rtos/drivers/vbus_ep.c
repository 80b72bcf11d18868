/*
 * The rtos's end of a V-Bus channel: lib/vbus.h's rings, connection rule and doorbell masks, on shared
 * memory only. The hypervisor is trusted, but its indices are still checked against the ring invariant
 * (a bad one is treated as an empty or full ring), so a bug there cannot make the rtos copy outside a
 * ring.
 */
#include "drivers/vbus_ep.h"

#include "lib/string.h"

void vbus_region_start(struct vbus_region *region, uint32_t nchan)
{
    region->nchan = nchan;
    __atomic_store_n(&region->magic, VBUS_MAGIC, __ATOMIC_RELEASE);
}

void vbus_ep_init(struct vbus_ep *ep, struct vbus_region *region, uint32_t n, uint32_t chan_off,
                  uint32_t to_linux_off, uint32_t to_linux_size, uint32_t to_rtos_off, uint32_t to_rtos_size)
{
    uintptr_t base = (uintptr_t)region;
    memset(ep, 0, sizeof(*ep));
    ep->region = region;
    ep->c = (struct vbus_chan *)(base + chan_off);
    ep->tx = (struct vbus_ring *)(base + to_linux_off);
    ep->rx = (struct vbus_ring *)(base + to_rtos_off);
    ep->tx_size = to_linux_size;
    ep->rx_size = to_rtos_size;
    ep->bit = 1u << n;
}

bool vbus_ring_hyp(struct vbus_region *region, uint32_t bits)
{
    return __atomic_fetch_or(&region->hyp_pending, bits, __ATOMIC_ACQ_REL) == 0;
}

uint32_t vbus_take_pending(struct vbus_region *region)
{
    return __atomic_exchange_n(&region->rtos_pending, 0u, __ATOMIC_ACQ_REL);
}

static void ring(struct vbus_ep *ep, bool *need)
{
    if (vbus_ring_hyp(ep->region, ep->bit)) {
        *need = true;
    }
}

void vbus_ep_open(struct vbus_ep *ep, bool *need)
{
    if (ep->open) {
        return;
    }
    ep->session++;
    ep->open = true;
    ep->acked = false;
    __atomic_store_n(&ep->c->rtos_session, ep->session, __ATOMIC_RELAXED);
    __atomic_store_n(&ep->c->rtos_open, 1u, __ATOMIC_RELEASE);
    ring(ep, need);
}

void vbus_ep_close(struct vbus_ep *ep, bool *need)
{
    if (!ep->open) {
        return;
    }
    ep->open = false;
    ep->acked = false;
    __atomic_store_n(&ep->c->rtos_open, 0u, __ATOMIC_RELEASE);
    ring(ep, need);
}

bool vbus_ep_connected(const struct vbus_ep *ep)
{
    return ep->open && ep->acked && ep->linux_open;
}

/* Bytes in to_rtos from rx_tail to its head (0 when the hypervisor's head breaks the invariant). */
static uint32_t rx_waiting(const struct vbus_ep *ep, uint32_t *head)
{
    *head = __atomic_load_n(&ep->rx->head, __ATOMIC_ACQUIRE);
    uint32_t n = *head - ep->rx_tail;
    return n <= ep->rx_size ? n : 0;
}

unsigned vbus_ep_sync(struct vbus_ep *ep, bool *need)
{
    struct vbus_chan *c = ep->c;
    uint32_t epoch = __atomic_load_n(&c->linux_epoch, __ATOMIC_ACQUIRE);
    if (epoch == ep->epoch) {
        return 0;
    }
    /* The three words belong to one epoch when the epoch reads the same after them (a later change
     * only moves the start forward, so a mixed read at the last try still discards nothing needed by a
     * connection the rtos will see). */
    uint32_t open = 0, start = 0, seen = 0;
    for (unsigned tries = 0; tries < 4u; tries++) {
        open = __atomic_load_n(&c->linux_open, __ATOMIC_RELAXED);
        start = __atomic_load_n(&c->to_rtos_start, __ATOMIC_RELAXED);
        seen = __atomic_load_n(&c->rtos_session_seen, __ATOMIC_ACQUIRE);
        uint32_t again = __atomic_load_n(&c->linux_epoch, __ATOMIC_ACQUIRE);
        if (again == epoch) {
            break;
        }
        epoch = again;
    }
    bool was = vbus_ep_connected(ep);
    bool was_linux = ep->linux_open;
    bool acked = ep->open && seen == ep->session;
    if (ep->open && (open != 0 || (acked && !ep->acked))) {
        /* Entering a connection, or this open's first acknowledgement: earlier bytes are not its own. */
        uint32_t head;
        uint32_t waiting = rx_waiting(ep, &head);
        uint32_t drop = start - ep->rx_tail;
        if (drop > waiting) {
            drop = 0; /* not among the waiting bytes: a start the hypervisor cannot have meant */
        }
        if (drop > 0) {
            ep->stats.discarded += drop;
            __atomic_store_n(&ep->c->rtos_discarded, ep->stats.discarded, __ATOMIC_RELAXED);
            ep->rx_tail += drop;
            __atomic_store_n(&ep->rx->tail, ep->rx_tail, __ATOMIC_RELEASE);
        }
    }
    ep->acked = acked;
    ep->linux_open = open != 0;
    ep->epoch = epoch;
    __atomic_store_n(&c->to_linux_start, ep->tx_head, __ATOMIC_RELAXED);
    __atomic_store_n(&c->rtos_epoch_seen, epoch, __ATOMIC_RELEASE);
    ring(ep, need);
    bool now = vbus_ep_connected(ep);
    unsigned ev = 0;
    if (was && (!now || (was_linux && open != 0))) {
        ev |= VBUS_EV_DISCONNECT; /* gone, or replaced by a new connection the rtos did not see open */
        ep->stats.disconnects++;
    }
    if (now && (!was || (ev & VBUS_EV_DISCONNECT))) {
        ev |= VBUS_EV_CONNECT;
        ep->stats.connects++;
    }
    return ev;
}

uint32_t vbus_ep_readable(const struct vbus_ep *ep)
{
    uint32_t head;
    return ep->open && ep->acked ? rx_waiting(ep, &head) : 0;
}

uint32_t vbus_ep_room(const struct vbus_ep *ep)
{
    if (!vbus_ep_connected(ep)) {
        return 0;
    }
    uint32_t used = ep->tx_head - __atomic_load_n(&ep->tx->tail, __ATOMIC_ACQUIRE);
    return used <= ep->tx_size ? ep->tx_size - used : 0;
}

uint32_t vbus_ep_read(struct vbus_ep *ep, void *buf, uint32_t n, bool *need)
{
    uint32_t waiting = vbus_ep_readable(ep);
    n = n < waiting ? n : waiting;
    if (n == 0) {
        return 0;
    }
    uint32_t at = ep->rx_tail & (ep->rx_size - 1u);
    uint32_t first = n < ep->rx_size - at ? n : ep->rx_size - at;
    memcpy(buf, ep->rx->data + at, first);
    memcpy((uint8_t *)buf + first, ep->rx->data, n - first);
    ep->rx_tail += n;
    __atomic_store_n(&ep->rx->tail, ep->rx_tail, __ATOMIC_RELEASE);
    ep->stats.received_bytes += n;
    ep->stats.received_msgs++;
    ring(ep, need); /* room for a write Linux may have waiting */
    return n;
}

static void count_full(struct vbus_ep *ep)
{
    ep->stats.full++;
    __atomic_store_n(&ep->c->rtos_full, ep->stats.full, __ATOMIC_RELAXED);
}

uint32_t vbus_ep_write(struct vbus_ep *ep, const void *buf, uint32_t n, bool *need)
{
    uint32_t room = vbus_ep_room(ep);
    if (n > room) {
        count_full(ep);
        n = room;
    }
    if (n == 0) {
        return 0;
    }
    uint32_t at = ep->tx_head & (ep->tx_size - 1u);
    uint32_t first = n < ep->tx_size - at ? n : ep->tx_size - at;
    memcpy(ep->tx->data + at, buf, first);
    memcpy(ep->tx->data, (const uint8_t *)buf + first, n - first);
    ep->tx_head += n;
    __atomic_store_n(&ep->tx->head, ep->tx_head, __ATOMIC_RELEASE);
    ep->stats.sent_bytes += n;
    ep->stats.sent_msgs++;
    ring(ep, need);
    return n;
}

uint32_t vbus_ep_write_all(struct vbus_ep *ep, const void *buf, uint32_t n, bool *need)
{
    if (n > vbus_ep_room(ep)) {
        count_full(ep);
        return 0;
    }
    return vbus_ep_write(ep, buf, n, need);
}
