/*
 * The V-Bus device (hyp/core/vbus.c, vmmio.c, vchan.c, vpass.c, virtq.c) with the rtos's end
 * (rtos/drivers/vbus_ep.c), on the host (vbus_sim.h): Linux's driver sequence, data both ways with content
 * checked, full rings, connections and reconnections, the rtos restarting, Linux resetting the device, the
 * 16-bit indices wrapping; and hand-made bad rings and register misuse, each of which must end in
 * DEVICE_NEEDS_RESET with the configuration interrupt and a log line naming the reason, the rtos's channel
 * closed, and a device that works again after Linux resets it. Each case runs in its own child process (the
 * device model's state is static).
 */
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "hyp/virtq.h"
#include "vbus_sim.h"

static const uint32_t small[SIM_MAX_CHAN] = {256, 256, 256, 256};
static const uint32_t large[SIM_MAX_CHAN] = {4096, 1024, 256, 65536};

static uint8_t pattern(size_t i, unsigned salt)
{
    uint32_t x = (uint32_t)i * 2654435761u + salt * 40503u;
    return (uint8_t)(x >> 24);
}

/* Linux writes n bytes on port i, the rtos echoes every byte back, until all n came back to Linux:
 * true if they are the same bytes in the same order. */
static bool echo(unsigned i, size_t n, unsigned salt)
{
    uint8_t *out = malloc(n + 1u), buf[1024];
    for (size_t k = 0; k < n; k++) {
        out[k] = pattern(k, salt);
    }
    size_t sent = 0, held = 0, held_at = 0;
    static uint8_t pend[1 << 17];
    sim.port[i].in_len = 0;
    for (unsigned rounds = 0; sim.port[i].in_len < n && rounds < 100000u; rounds++) {
        sent += sim_port_write(i, out + sent, n - sent);
        sim_settle();
        size_t got;
        while (held < sizeof(pend) && (got = sim_rtos_read(i, pend + held, sizeof(pend) - held)) > 0) {
            held += got;
        }
        if (held > held_at) {
            held_at += sim_rtos_write(i, pend + held_at, held - held_at);
        }
        if (held_at == held) {
            held = held_at = 0;
        }
        sim_settle();
    }
    (void)buf;
    bool same = sim.port[i].in_len == n && memcmp(sim.port[i].in, out, n) == 0;
    free(out);
    return same;
}

static void connect_all(void)
{
    sim_rtos_start();
    for (unsigned i = 0; i < sim.nchan; i++) {
        sim_rtos_open(i);
    }
    sim_settle();
    CHECK(sim_probe());
    sim_settle();
    for (unsigned i = 0; i < sim.nchan; i++) {
        CHECK(sim.port[i].host_connected);
        sim_port_open(i);
    }
    sim_settle();
    for (unsigned i = 0; i < sim.nchan; i++) {
        CHECK(vbus_ep_connected(&sim.ep[i]));
    }
}

/* ------------------------------------------------------------------------------------------------ */

static void test_handshake(void)
{
    sim_setup(2, small);
    sim_rtos_start();
    sim_rtos_open(0);
    sim_settle();
    CHECK(sim_probe());
    sim_settle();
    CHECK(strcmp(sim.port[0].name, "echo") == 0 && strcmp(sim.port[1].name, "telemetry") == 0);
    /* The order Linux needs: PORT_ADD, then (after its PORT_READY) the name, then PORT_OPEN. */
    CHECK(sim.port[0].nev == 3 && sim.port[0].ev[0] == VIRTIO_CONSOLE_DEVICE_ADD &&
          sim.port[0].ev[1] == VIRTIO_CONSOLE_PORT_NAME && sim.port[0].ev[2] == VIRTIO_CONSOLE_PORT_OPEN);
    CHECK(sim.port[1].nev == 2 && sim.port[1].ev[0] == VIRTIO_CONSOLE_DEVICE_ADD);
    CHECK(sim.port[0].host_connected && !sim.port[1].host_connected);
    /* Linux opens before the rtos: not connected for the rtos, the port closed for Linux, and the rtos
     * not interrupted (a channel it does not use never rings it), however often Linux opens and closes. */
    unsigned rung = sim.sgi_rtos_total;
    for (unsigned k = 0; k < 3u; k++) {
        sim_port_open(1);
        sim_settle();
        sim_port_close(1);
        sim_settle();
    }
    sim_port_open(1);
    sim_settle();
    CHECK(sim.sgi_rtos_total == rung);
    CHECK(!vbus_ep_connected(&sim.ep[1]));
    CHECK(sim_port_write(1, (const uint8_t *)"x", 1) == 0); /* Linux would block */
    sim_rtos_open(1);
    sim_settle();
    CHECK(sim.port[1].host_connected && vbus_ep_connected(&sim.ep[1]));
    CHECK(sim.rtos_ev[1] == VBUS_EV_CONNECT);
    sim_rtos_close(1);
    sim_settle();
    CHECK(!sim.port[1].host_connected);
    CHECK(!sim_needs_reset());
}

static void test_round_trips(void)
{
    sim_setup(4, large);
    connect_all();
    static const size_t sizes[] = {1, 2, 255, 256, 257, 4095, 4096, 4097, 65536};
    for (unsigned i = 0; i < 4; i++) {
        for (unsigned k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
            CHECK(echo(i, sizes[k], i * 16u + k));
        }
    }
    struct vbus_chan_stats s = vbus_stats(2); /* 256-byte rings: writes waited for room */
    CHECK(s.full > 0 && s.to_rtos_bytes == s.to_linux_bytes && s.discarded == 0 && s.errors == 0);
    CHECK(!sim_needs_reset());
}

/* Both rings full: Linux's writes wait (its transmitq full, as a blocking write would wait), the rtos's
 * writes are refused ("would block"); nothing is lost once both sides read again. */
static void test_full_both_ways(void)
{
    sim_setup(1, small);
    connect_all();
    static uint8_t data[40000], back[40000];
    for (size_t k = 0; k < sizeof(data); k++) {
        data[k] = pattern(k, 7);
    }
    size_t queued = sim_port_write(0, data, sizeof(data));
    sim_settle();
    CHECK(queued == SIM_QN * SIM_BUF);
    CHECK(sim_port_write(0, data + queued, sizeof(data) - queued) == 0); /* every buffer in use */
    CHECK(vbus_ep_readable(&sim.ep[0]) == 256 && vbus_stats(0).full >= 1);
    sim.port[0].paused = true;
    size_t rtos_sent = 0, k;
    while ((k = sim_rtos_write(0, data + rtos_sent, 100)) > 0) {
        rtos_sent += k;
        sim_settle();
    }
    /* Each of Linux's 8 receive buffers went back with the 100 bytes there were, then to_linux filled. */
    CHECK(vbus_ep_room(&sim.ep[0]) == 0 && rtos_sent == SIM_QN * 100u + 256u);
    /* Both sides read again: everything arrives, in order. */
    sim.port[0].paused = false;
    size_t got = 0, sent = queued;
    for (unsigned rounds = 0; got < sizeof(data) && rounds < 10000u; rounds++) {
        got += sim_rtos_read(0, back + got, sizeof(back) - got);
        sent += sim_port_write(0, data + sent, sizeof(data) - sent);
        sim_settle();
    }
    CHECK(got == sizeof(data) && memcmp(back, data, sizeof(data)) == 0);
    CHECK(sim.port[0].in_len == rtos_sent && memcmp(sim.port[0].in, data, rtos_sent) == 0);
    CHECK(vbus_stats(0).discarded == 0 && !sim_needs_reset());
}

static void test_reconnect(void)
{
    sim_setup(1, small);
    connect_all();
    uint8_t buf[64];
    /* echo 5 > port: the bytes written just before the close still reach the rtos. */
    CHECK(sim_port_write(0, (const uint8_t *)"5\n", 2) == 2);
    sim_port_close(0);
    sim_settle();
    CHECK((sim.rtos_ev[0] & VBUS_EV_DISCONNECT) != 0 && !vbus_ep_connected(&sim.ep[0]));
    CHECK(sim_rtos_read(0, buf, sizeof(buf)) == 2 && memcmp(buf, "5\n", 2) == 0);
    /* A program writes and closes, the next opens before the rtos read: the old bytes are dropped. */
    sim_port_open(0);
    sim_settle();
    CHECK(sim_port_write(0, (const uint8_t *)"old", 3) == 3);
    sim_settle();
    sim.rtos_ev[0] = 0;
    sim_port_close(0);
    sim_port_open(0);
    sim_settle();
    CHECK(sim.rtos_ev[0] == (VBUS_EV_CONNECT | VBUS_EV_DISCONNECT));
    CHECK(sim_port_write(0, (const uint8_t *)"new", 3) == 3);
    sim_settle();
    CHECK(sim_rtos_read(0, buf, sizeof(buf)) == 3 && memcmp(buf, "new", 3) == 0);
    CHECK(sim.ep[0].stats.discarded == 3);
    /* The rtos's bytes for a program that closed before reading do not reach the next one: Linux's
     * receive buffers all in use, "stale" waits in to_linux when the program closes. */
    sim.port[0].paused = true;
    for (unsigned k = 0; k < SIM_QN; k++) {
        CHECK(sim_rtos_write(0, (const uint8_t *)"f", 1) == 1);
        sim_settle();
    }
    CHECK(sim_rtos_write(0, (const uint8_t *)"stale", 5) == 5);
    sim_settle();
    CHECK(vbus_ep_room(&sim.ep[0]) == 256u - 5u);
    sim_port_close(0);
    sim_settle();
    sim.port[0].paused = false;
    sim_settle();
    sim_port_open(0);
    sim_settle();
    CHECK(vbus_stats(0).discarded == 5);
    CHECK(sim_rtos_write(0, (const uint8_t *)"fresh", 5) == 5);
    sim_settle();
    CHECK(sim.port[0].in_len == 5 && memcmp(sim.port[0].in, "fresh", 5) == 0);
    /* The rtos reads without having looked at the new epoch (on hardware: the change lands between its
     * check and its read): none of the new connection's bytes is there, the device holds them until
     * the rtos acted on the change. */
    CHECK(sim_port_write(0, (const uint8_t *)"A", 1) == 1);
    sim_settle();
    sim_port_close(0);
    sim_port_open(0);
    CHECK(sim_port_write(0, (const uint8_t *)"B", 1) == 1);
    bool need = false;
    CHECK(vbus_ep_read(&sim.ep[0], buf, sizeof(buf), &need) == 1 && buf[0] == 'A');
    sim_ring(need);
    sim_settle();
    CHECK(sim_rtos_read(0, buf, sizeof(buf)) == 1 && buf[0] == 'B');
    CHECK(echo(0, 3000, 3));
    CHECK(!sim_needs_reset());
}

static void test_rtos_restart(void)
{
    sim_setup(2, small);
    connect_all();
    /* Bytes in flight both ways when the rtos partition restarts. */
    static uint8_t data[8192];
    memset(data, 'L', sizeof(data));
    CHECK(sim_port_write(0, data, sizeof(data)) == sizeof(data));
    sim.port[0].paused = true;
    for (unsigned k = 0; k < SIM_QN; k++) {
        CHECK(sim_rtos_write(0, (const uint8_t *)"f", 1) == 1); /* Linux's receive buffers all used */
        sim_settle();
    }
    CHECK(sim_rtos_write(0, (const uint8_t *)"RRRR", 4) == 4); /* waits in to_linux */
    sim_settle();
    vbus_part_down(&hyp_part[0]);
    sim_settle();
    CHECK(!sim.port[0].host_connected && !sim.port[1].host_connected);
    CHECK(sim_port_write(0, data, 10) == 0);
    memset(sim.region, 0, SIM_REGION_SIZE);
    vbus_part_up(&hyp_part[0]);
    sim_settle();
    CHECK(!sim.port[0].host_connected);
    sim.port[0].paused = false;
    sim_settle();
    CHECK(sim.port[0].in_len == SIM_QN); /* what Linux had got before the restart */
    sim.port[0].in_len = 0;
    sim_rtos_start();
    sim_rtos_open(0);
    sim_rtos_open(1);
    sim_settle();
    /* Linux's programs still have the ports open: connected again at once, nothing old crosses. */
    CHECK(sim.port[0].host_connected && vbus_ep_connected(&sim.ep[0]) && vbus_ep_connected(&sim.ep[1]));
    CHECK(vbus_ep_readable(&sim.ep[0]) == 0 && sim.port[0].in_len == 0);
    CHECK(vbus_stats(0).discarded > 0);
    CHECK(echo(0, 5000, 9) && echo(1, 700, 10));
    CHECK(!sim_needs_reset());
}

static void test_linux_reset(void)
{
    sim_setup(2, small);
    connect_all();
    CHECK(echo(1, 500, 1));
    sim.rtos_ev[0] = sim.rtos_ev[1] = 0;
    sim_w(VIRTIO_MMIO_STATUS, 0); /* reboot: the driver resets the device */
    sim_settle();
    CHECK(sim.rtos_ev[0] == VBUS_EV_DISCONNECT && sim.rtos_ev[1] == VBUS_EV_DISCONNECT);
    CHECK(sim_probe());
    sim_settle();
    CHECK(sim.port[0].host_connected && sim.port[1].host_connected);
    sim_port_open(0);
    sim_port_open(1);
    sim_settle();
    CHECK(vbus_ep_connected(&sim.ep[0]) && echo(0, 10000, 2) && echo(1, 10000, 3));
    /* Linux's partition restarts (part_down on its own CPU): the same, without Linux's help. */
    vbus_part_down(&hyp_part[1]);
    sim_settle();
    CHECK(!vbus_ep_connected(&sim.ep[0]));
    CHECK(sim_probe());
    sim_port_open(0);
    sim_settle();
    CHECK(echo(0, 100, 4));
}

/* A broken device still gives the driver's control messages back (Linux spins on each; its stock
 * driver never resets the device), but does nothing for them; rebinding the driver (a reset and a new
 * probe) brings the ports back. */
static void test_broken_returns_control(void)
{
    sim_setup(2, small);
    connect_all();
    CHECK(echo(0, 300, 1));
    sim_w(VIRTIO_MMIO_STATUS, sim_r(VIRTIO_MMIO_STATUS) | 0x10u); /* an unknown status bit */
    sim_settle();
    CHECK(sim_needs_reset() && !vbus_ep_connected(&sim.ep[0]));
    sim.rtos_ev[0] = sim.rtos_ev[1] = 0;
    for (unsigned round = 0; round < 3; round++) { /* close and open again: each message comes back */
        struct sim_q *q = &sim.q[VIRTIO_CONSOLE_CTRL_TX];
        struct virtio_console_control m = {0, VIRTIO_CONSOLE_PORT_OPEN, (uint16_t)(round % 2u)};
        memcpy(sim_host(q->buf_ipa[0]), &m, sizeof(m));
        sim_add(VIRTIO_CONSOLE_CTRL_TX, 0, sizeof(m), false);
        sim_notify(VIRTIO_CONSOLE_CTRL_TX);
        unsigned slot = ~0u;
        uint32_t len = ~0u;
        CHECK(sim_used(VIRTIO_CONSOLE_CTRL_TX, &slot, &len) && slot == 0 && len == 0);
    }
    sim_settle();
    /* Nothing was done for them: no connection reached the rtos, the device still waits for a reset. */
    CHECK(sim.rtos_ev[0] == 0 && !vbus_ep_connected(&sim.ep[0]) && sim_needs_reset());
    CHECK(sim_probe());
    sim_port_open(0);
    sim_settle();
    CHECK(vbus_ep_connected(&sim.ep[0]) && echo(0, 1000, 2));
}

/* VBUS_STATS_PORT, the last port: named, never opened by the other side; each open reads a snapshot of
 * the counters as they are then (bytes each way per channel, the rtos's own full count), then nothing. */
static void test_stats_port(void)
{
    sim_setup(2, small);
    connect_all();
    unsigned sp = sim.nchan;
    CHECK(strcmp(sim.port[sp].name, VBUS_STATS_PORT) == 0 && !sim.port[sp].host_connected);
    CHECK(echo(0, 1000, 1));
    /* the rtos writes more than its ring to Linux takes: its own full count goes up */
    static uint8_t big[600];
    memset(big, 'x', sizeof(big));
    sim.port[1].paused = true;
    size_t w = sim_rtos_write(1, big, sizeof(big));
    CHECK(w == 256 && sim.ep[1].stats.full == 1);
    sim_settle();
    for (unsigned round = 0; round < 2; round++) {
        sim_port_open(sp);
        sim_settle();
        char text[4096];
        size_t n = sim.port[sp].in_len < sizeof(text) - 1u ? sim.port[sp].in_len : sizeof(text) - 1u;
        memcpy(text, sim.port[sp].in, n);
        text[n] = '\0';
        struct vbus_chan_stats e = vbus_stats(0);
        char want[256];
        snprintf(want, sizeof(want),
                 "channel name=echo rtos=rtos linux_open=1 rtos_open=1 to_rtos_bytes=%lu to_rtos_writes=%lu "
                 "to_linux_bytes=%lu ",
                 (unsigned long)e.to_rtos_bytes, (unsigned long)e.to_rtos_msgs,
                 (unsigned long)e.to_linux_bytes);
        if (strncmp(text, "rtmux-stats 1 uptime_us=", 24) != 0 || strstr(text, want) == NULL ||
            strstr(text, "channel name=telemetry rtos=rtos linux_open=1 rtos_open=1 ") == NULL ||
            strstr(text, " rtos_full=1 ") == NULL || strstr(text, "device partition=linux ") == NULL ||
            strstr(text, "needs_reset=0 ") == NULL) {
            fprintf(stderr, "stats port: %s", text);
            CHECK(false);
        }
        CHECK(e.to_rtos_bytes == 1000u + 10u * round && !sim.port[sp].host_connected);
        sim_port_close(sp);
        sim_settle();
        CHECK(echo(0, 10, 2)); /* the next snapshot shows these too */
    }
    CHECK(!sim_needs_reset());
}

/* vbus_ep_write_all (rtos/chan.h's messages): all of a message into the ring to Linux or none of it, so a
 * message that finds too little room leaves the ring as it was for the next one, and Linux reads every
 * message contiguous. */
static void test_write_all(void)
{
    sim_setup(1, small);
    connect_all();
    sim.port[0].paused = true; /* nothing leaves the 256-byte ring meanwhile */
    static uint8_t a[200], b[100], c[56];
    memset(a, 'a', sizeof(a));
    memset(b, 'b', sizeof(b));
    memset(c, 'c', sizeof(c));
    struct vbus_ep *ep = &sim.ep[0];
    bool need = false;
    CHECK(vbus_ep_write_all(ep, a, sizeof(a), &need) == sizeof(a) && ep->stats.full == 0);
    uint32_t head = ep->tx_head;
    CHECK(vbus_ep_write_all(ep, b, sizeof(b), &need) == 0 && ep->tx_head == head && ep->stats.full == 1);
    CHECK(vbus_ep_room(ep) == sizeof(c) && vbus_ep_write_all(ep, c, sizeof(c), &need) == sizeof(c));
    CHECK(vbus_ep_write_all(ep, b, 0, &need) == 0 && ep->stats.full == 1); /* nothing fits nothing */
    sim_ring(need);
    sim.port[0].paused = false;
    sim_settle();
    CHECK(vbus_ep_write_all(ep, b, sizeof(b), &need) == sizeof(b));
    sim_ring(need);
    sim_settle();
    CHECK(sim.port[0].in_len == 356 && memcmp(sim.port[0].in, a, 200) == 0 &&
          memcmp(sim.port[0].in + 200, c, 56) == 0 && memcmp(sim.port[0].in + 256, b, 100) == 0);
    CHECK(!sim_needs_reset());
}

/* The 16-bit ring indices wrap: more than 65536 buffers each way through one port. */
static void test_index_wrap(void)
{
    sim_setup(1, small);
    connect_all();
    uint8_t c = 0, buf[16];
    size_t ok = 0;
    for (unsigned k = 0; k < 70000u; k++) {
        c = (uint8_t)k;
        if (sim_port_write(0, &c, 1) != 1) {
            break;
        }
        sim_settle();
        if (sim_rtos_read(0, buf, sizeof(buf)) != 1 || buf[0] != c) {
            break;
        }
        if (sim_rtos_write(0, buf, 1) != 1) {
            break;
        }
        sim_settle();
        if (sim.port[0].in_len != 1 || sim.port[0].in[0] != c) {
            break;
        }
        sim.port[0].in_len = 0;
        ok++;
    }
    CHECK(ok == 70000u);
    CHECK(!sim_needs_reset());
}

/* virtq.c's bounds on their own: address ranges at RAM's edges, the chain length limit. */
static void test_virtq_limits(void)
{
    uint8_t *ram = sim_map_guarded(SIM_RAM_SIZE);
    struct virtq_ram r = {SIM_RAM_IPA, SIM_RAM_SIZE, (uintptr_t)ram};
    CHECK(virtq_ram_map(&r, SIM_RAM_IPA, SIM_RAM_SIZE) == ram);
    CHECK(virtq_ram_map(&r, SIM_RAM_IPA + SIM_RAM_SIZE - 1u, 1) == ram + SIM_RAM_SIZE - 1u);
    CHECK(virtq_ram_map(&r, SIM_RAM_IPA + SIM_RAM_SIZE, 1) == NULL);
    CHECK(virtq_ram_map(&r, SIM_RAM_IPA, SIM_RAM_SIZE + 1u) == NULL);
    CHECK(virtq_ram_map(&r, SIM_RAM_IPA - 1u, 1) == NULL);
    CHECK(virtq_ram_map(&r, ~0ull, 2) == NULL);
    CHECK(virtq_ram_map(&r, SIM_RAM_IPA + 16u, ~0ull) == NULL);
    struct virtq q = {.num = 32,
                      .desc_ipa = SIM_RAM_IPA,
                      .avail_ipa = SIM_RAM_IPA + 0x1000u,
                      .used_ipa = SIM_RAM_IPA + 0x2000u};
    CHECK(virtq_enable(&q, &r, 64) == NULL && q.ready);
    struct virtq_desc *d = (struct virtq_desc *)(void *)ram;
    for (unsigned i = 0; i < 32; i++) {
        d[i] = (struct virtq_desc){SIM_RAM_IPA, SIM_RAM_SIZE, i < 31u ? VIRTQ_DESC_F_NEXT : 0,
                                   (uint16_t)(i + 1u)};
    }
    uint32_t total = 0;
    const char *why = NULL;
    CHECK(virtq_chain_check(&q, &r, 0, &total, &why) == -1 && why != NULL &&
          strstr(why, "longer than the device accepts") != NULL);
    d[15].flags = 0; /* 16 descriptors of 1 MiB: exactly the limit */
    CHECK(virtq_chain_check(&q, &r, 0, &total, &why) == 0 && total == VIRTQ_CHAIN_MAX);
    q.num = 48; /* not a power of two */
    virtq_disable(&q);
    CHECK(virtq_enable(&q, &r, 64) != NULL && !q.ready);
}

/* ------------------------------------------------------------------------------------------------ */
/* Bounded passes (hyp/core/vpass.c) */

/* Descriptor visits one pass may make: vpass.h's VPASS_DESCS, plus one chain it never cuts (three walks
 * of at most a 64-entry queue). */
#define PASS_VISITS_MAX (512u + 3u * 64u)
#define BIG_QN          64u

/* Port 0's transmitq set up again with BIG_QN entries: head k's chain runs k -> k+1 -> ... -> 63 (the
 * chains share the table's tail, 2,080 descriptors in all), every entry made available at once. */
static unsigned big_shared_chains(void)
{
    const unsigned qi = 1;
    uint64_t desc = sim_alloc(VIRTQ_DESC_BYTES(BIG_QN), 16), avail = sim_alloc(VIRTQ_AVAIL_BYTES(BIG_QN), 2);
    uint64_t used = sim_alloc(VIRTQ_USED_BYTES(BIG_QN), 4), buf = sim_alloc(8, 8);
    struct virtq_desc *d = sim_host(desc);
    struct virtq_avail *a = sim_host(avail);
    for (unsigned k = 0; k < BIG_QN; k++) {
        d[k] = (struct virtq_desc){buf, 8, k + 1u < BIG_QN ? VIRTQ_DESC_F_NEXT : 0, (uint16_t)(k + 1u)};
        a->ring[k] = (uint16_t)k;
    }
    sim_w(VIRTIO_MMIO_QUEUE_SEL, qi);
    sim_w(VIRTIO_MMIO_QUEUE_READY, 0);
    sim_w(VIRTIO_MMIO_QUEUE_NUM, BIG_QN);
    sim_w(VIRTIO_MMIO_QUEUE_DESC_LOW, (uint32_t)desc);
    sim_w(VIRTIO_MMIO_QUEUE_DESC_HIGH, (uint32_t)(desc >> 32));
    sim_w(VIRTIO_MMIO_QUEUE_DRIVER_LOW, (uint32_t)avail);
    sim_w(VIRTIO_MMIO_QUEUE_DRIVER_HIGH, (uint32_t)(avail >> 32));
    sim_w(VIRTIO_MMIO_QUEUE_DEVICE_LOW, (uint32_t)used);
    sim_w(VIRTIO_MMIO_QUEUE_DEVICE_HIGH, (uint32_t)(used >> 32));
    sim_w(VIRTIO_MMIO_QUEUE_READY, 1);
    CHECK(!sim_needs_reset());
    __atomic_store_n(&a->idx, (uint16_t)BIG_QN, __ATOMIC_RELEASE);
    sim.q[qi].used = sim_host(used);
    return qi;
}

static void test_pass_bounded(void)
{
    sim_setup(2, small);
    connect_all();
    sim_rtos_close(0); /* Linux's writes are dropped: each costs its chain's walk only */
    sim_settle();
    unsigned qi = big_shared_chains();
    sim.sgi_hyp = 0;
    uint64_t v0 = virtq_visits;
    sim_notify(qi);
    uint64_t first = virtq_visits - v0;
    CHECK(first <= PASS_VISITS_MAX && first >= 512u);
    CHECK(sim.sgi_hyp == 1); /* the rest asked for: its own interrupt */
    CHECK(sim.q[qi].used->idx < BIG_QN);
    /* The rest in later passes (the doorbell), each bounded the same way, until every entry is back. */
    unsigned passes = 1;
    while (sim.sgi_hyp != 0 && passes < 100u) {
        sim.sgi_hyp = 0;
        uint64_t v = virtq_visits;
        vbus_doorbell(sim.lv);
        CHECK(virtq_visits - v <= PASS_VISITS_MAX);
        passes++;
    }
    CHECK(sim.q[qi].used->idx == BIG_QN && !sim_needs_reset());
    CHECK(virtq_visits - v0 >= BIG_QN * (BIG_QN + 1u) / 2u && passes >= 4u);
}

static void test_pass_steps_aside_for_the_rtos(void)
{
    sim_shared_next = true; /* Linux's CPU is the rtos's too: passes also stop for the rtos */
    sim_setup(2, large);
    connect_all();
    CHECK(echo(0, 3000, 4));
    sim.sgi_hyp = 0;
    sim.rtos_soon = 1; /* the rtos's timer is due: the write's trap does nothing, and asks for more */
    static uint8_t data[2000];
    for (size_t k = 0; k < sizeof(data); k++) {
        data[k] = pattern(k, 5);
    }
    sim.port[0].in_len = 0;
    CHECK(sim_port_write(0, data, sizeof(data)) == sizeof(data));
    uint8_t got[sizeof(data)];
    CHECK(sim_rtos_read(0, got, sizeof(got)) == 0 && sim.sgi_hyp == 1);
    vbus_doorbell(sim.lv); /* the rtos idles: Linux runs again and takes its interrupt */
    CHECK(sim_rtos_read(0, got, sizeof(got)) == sizeof(data) && memcmp(got, data, sizeof(data)) == 0);
    CHECK(echo(0, 20000, 6) && !sim_needs_reset());
}

/* ------------------------------------------------------------------------------------------------ */
/* Bad input: each ends in NEEDS_RESET, the configuration interrupt and a log line; reset recovers. */

struct q_ref {
    volatile struct virtq_desc *desc;
    volatile struct virtq_avail *avail;
};

static struct q_ref qref(unsigned qi)
{
    return (struct q_ref){sim.q[qi].desc, sim.q[qi].avail};
}

/* Makes head `slot` available on qi without touching its descriptor. */
static void avail_raw(unsigned qi, uint16_t head)
{
    struct sim_q *q = &sim.q[qi];
    q->avail->ring[q->avail_idx % SIM_QN] = head;
    q->avail_idx++;
    __atomic_store_n(&q->avail->idx, q->avail_idx, __ATOMIC_RELEASE);
}

static void bad_tx_loop(void)
{
    struct q_ref q = qref(1);
    q.desc[0] = (struct virtq_desc){sim.q[1].buf_ipa[0], 16, VIRTQ_DESC_F_NEXT, 1};
    q.desc[1] = (struct virtq_desc){sim.q[1].buf_ipa[1], 16, VIRTQ_DESC_F_NEXT, 0};
    avail_raw(1, 0);
    sim_notify(1);
}

static void bad_tx_self_loop(void)
{
    struct q_ref q = qref(1);
    q.desc[3] = (struct virtq_desc){sim.q[1].buf_ipa[3], 1, VIRTQ_DESC_F_NEXT, 3};
    avail_raw(1, 3);
    sim_notify(1);
}

static void bad_tx_outside(void)
{
    qref(1).desc[0] = (struct virtq_desc){SIM_RAM_IPA + SIM_RAM_SIZE - 8u, 16, 0, 0};
    avail_raw(1, 0);
    sim_notify(1);
}

static void bad_tx_below(void)
{
    qref(1).desc[0] = (struct virtq_desc){SIM_RAM_IPA - 4096u, 16, 0, 0};
    avail_raw(1, 0);
    sim_notify(1);
}

static void bad_tx_wrapping_address(void)
{
    qref(1).desc[0] = (struct virtq_desc){~0ull - 4u, 16, 0, 0};
    avail_raw(1, 0);
    sim_notify(1);
}

static void bad_tx_huge(void)
{
    qref(1).desc[0] = (struct virtq_desc){SIM_RAM_IPA, 0xffffffffu, 0, 0};
    avail_raw(1, 0);
    sim_notify(1);
}

static void bad_rx_next_beyond(void)
{
    /* A receive chain whose next descriptor is beyond the table; the rtos's byte makes the device use it. */
    struct q_ref q = qref(0);
    for (unsigned s = 0; s < SIM_QN; s++) {
        q.desc[s].flags = VIRTQ_DESC_F_NEXT | VIRTQ_DESC_F_WRITE;
        q.desc[s].next = SIM_QN;
    }
    CHECK(sim_rtos_write(0, (const uint8_t *)"x", 1) == 1);
    sim_settle();
}

static void bad_avail_jump(void)
{
    struct sim_q *q = &sim.q[1];
    q->avail_idx = (uint16_t)(q->avail_idx + SIM_QN + 1u);
    __atomic_store_n(&q->avail->idx, q->avail_idx, __ATOMIC_RELEASE);
    sim_notify(1);
}

static void bad_avail_wrap_back(void)
{
    struct sim_q *q = &sim.q[1];
    q->avail_idx = (uint16_t)(q->avail_idx - 1u); /* behind the device: 65535 waiting */
    __atomic_store_n(&q->avail->idx, q->avail_idx, __ATOMIC_RELEASE);
    sim_notify(1);
}

static void bad_head_index(void)
{
    avail_raw(1, SIM_QN);
    sim_notify(1);
}

static void bad_head_index_high(void)
{
    avail_raw(1, 0xffff);
    sim_notify(1);
}

static void bad_tx_writable(void)
{
    qref(1).desc[2] = (struct virtq_desc){sim.q[1].buf_ipa[2], 8, VIRTQ_DESC_F_WRITE, 0};
    avail_raw(1, 2);
    sim_notify(1);
}

static void bad_rx_readable(void)
{
    /* Linux re-posts a receive buffer without WRITE; the rtos's bytes make the device use it. */
    for (unsigned s = 0; s < SIM_QN; s++) {
        qref(0).desc[s].flags = 0;
    }
    CHECK(sim_rtos_write(0, (const uint8_t *)"ab", 2) == 2);
    sim_settle();
}

static void bad_rx_empty(void)
{
    for (unsigned s = 0; s < SIM_QN; s++) {
        qref(0).desc[s].len = 0;
    }
    CHECK(sim_rtos_write(0, (const uint8_t *)"ab", 2) == 2);
    sim_settle();
}

static void bad_indirect(void)
{
    qref(1).desc[0] = (struct virtq_desc){sim.q[1].buf_ipa[0], 16, VIRTQ_DESC_F_INDIRECT, 0};
    avail_raw(1, 0);
    sim_notify(1);
}

static void bad_flags(void)
{
    qref(1).desc[0] = (struct virtq_desc){sim.q[1].buf_ipa[0], 16, 0x80, 0};
    avail_raw(1, 0);
    sim_notify(1);
}

static void bad_ctrl_short(void)
{
    qref(3).desc[0] = (struct virtq_desc){sim.q[3].buf_ipa[0], 4, 0, 0};
    avail_raw(3, 0);
    sim_notify(3);
}

static void bad_ctrl_port(void)
{
    struct virtio_console_control m = {99, VIRTIO_CONSOLE_PORT_OPEN, 1};
    memcpy(sim_host(sim.q[3].buf_ipa[0]), &m, sizeof(m));
    sim_add(3, 0, sizeof(m), false);
    sim_notify(3);
}

static void bad_ctrl_event(void)
{
    struct virtio_console_control m = {0, 42, 1};
    memcpy(sim_host(sim.q[3].buf_ipa[0]), &m, sizeof(m));
    sim_add(3, 0, sizeof(m), false);
    sim_notify(3);
}

static void bad_ctrl_rx_small(void)
{
    /* Control receive buffers of 4 bytes: no room for a message (a port close sends PORT_OPEN 0). */
    for (unsigned s = 0; s < SIM_QN; s++) {
        qref(2).desc[s].len = 4;
    }
    sim_rtos_close(0);
    sim_settle();
}

static void bad_notify_queue(void)
{
    sim_notify(sim.nqueues);
}

static void bad_register_width(void)
{
    (void)sim_access(VIRTIO_MMIO_QUEUE_NOTIFY, true, 1, 2);
}

static void bad_register_unaligned(void)
{
    /* a read of the wrong width or alignment returns zero and changes nothing */
    CHECK(sim_access(VIRTIO_MMIO_MAGIC_VALUE, false, 0, 1) == 0 &&
          sim_access(VIRTIO_MMIO_STATUS + 1u, false, 0, 4) == 0);
    CHECK(!sim_needs_reset());
    (void)sim_access(VIRTIO_MMIO_STATUS + 1u, true, 0, 4);
}

static void bad_readonly_register(void)
{
    sim_w(VIRTIO_MMIO_MAGIC_VALUE, 0);
}

static void bad_queue_while_ready(void)
{
    sim_w(VIRTIO_MMIO_QUEUE_SEL, 1);
    sim_w(VIRTIO_MMIO_QUEUE_DESC_LOW, 0);
}

static void bad_status_clear(void)
{
    sim_w(VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER);
}

static void bad_status_bits(void)
{
    sim_w(VIRTIO_MMIO_STATUS, sim_r(VIRTIO_MMIO_STATUS) | 0x10u);
}

/* Setup-time violations: from a reset device, before anything is connected. */
static void bad_queue_size(uint32_t num)
{
    sim_w(VIRTIO_MMIO_STATUS, 0);
    sim_w(VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACKNOWLEDGE);
    sim_w(VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER);
    sim_set_features((1ull << VIRTIO_F_VERSION_1) | (1ull << VIRTIO_CONSOLE_F_MULTIPORT));
    sim_w(VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER | VIRTIO_STATUS_FEATURES_OK);
    sim_w(VIRTIO_MMIO_QUEUE_SEL, 0);
    sim_w(VIRTIO_MMIO_QUEUE_NUM, num);
    sim_w(VIRTIO_MMIO_QUEUE_DESC_LOW, (uint32_t)SIM_RAM_IPA);
    sim_w(VIRTIO_MMIO_QUEUE_DRIVER_LOW, (uint32_t)SIM_RAM_IPA + 0x4000u);
    sim_w(VIRTIO_MMIO_QUEUE_DEVICE_LOW, (uint32_t)SIM_RAM_IPA + 0x8000u);
    sim_w(VIRTIO_MMIO_QUEUE_READY, 1);
}

static void bad_size_zero(void)
{
    bad_queue_size(0);
}

static void bad_size_odd(void)
{
    bad_queue_size(12);
}

static void bad_size_big(void)
{
    bad_queue_size(128); /* above QueueNumMax */
}

static void bad_size_huge(void)
{
    bad_queue_size(0x80000000u);
}

static void bad_ring_outside(void)
{
    sim_w(VIRTIO_MMIO_STATUS, 0);
    sim_w(VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACKNOWLEDGE);
    sim_w(VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER);
    sim_set_features((1ull << VIRTIO_F_VERSION_1) | (1ull << VIRTIO_CONSOLE_F_MULTIPORT));
    sim_w(VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER | VIRTIO_STATUS_FEATURES_OK);
    sim_w(VIRTIO_MMIO_QUEUE_SEL, 2);
    sim_w(VIRTIO_MMIO_QUEUE_NUM, 64);
    sim_w(VIRTIO_MMIO_QUEUE_DESC_LOW, (uint32_t)SIM_RAM_IPA);
    sim_w(VIRTIO_MMIO_QUEUE_DRIVER_LOW, (uint32_t)SIM_RAM_IPA);
    /* the used ring's last element crosses the end of RAM */
    sim_w(VIRTIO_MMIO_QUEUE_DEVICE_LOW, (uint32_t)(SIM_RAM_IPA + SIM_RAM_SIZE - 64u));
    sim_w(VIRTIO_MMIO_QUEUE_READY, 1);
}

static void bad_ring_misaligned(void)
{
    sim_w(VIRTIO_MMIO_STATUS, 0);
    sim_w(VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACKNOWLEDGE);
    sim_w(VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER);
    sim_set_features((1ull << VIRTIO_F_VERSION_1) | (1ull << VIRTIO_CONSOLE_F_MULTIPORT));
    sim_w(VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER | VIRTIO_STATUS_FEATURES_OK);
    sim_w(VIRTIO_MMIO_QUEUE_SEL, 2);
    sim_w(VIRTIO_MMIO_QUEUE_NUM, 8);
    sim_w(VIRTIO_MMIO_QUEUE_DESC_LOW, (uint32_t)SIM_RAM_IPA + 8u);
    sim_w(VIRTIO_MMIO_QUEUE_READY, 1);
}

static void bad_ring_high_half(void)
{
    sim_w(VIRTIO_MMIO_STATUS, 0);
    sim_w(VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACKNOWLEDGE);
    sim_w(VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER);
    sim_set_features((1ull << VIRTIO_F_VERSION_1) | (1ull << VIRTIO_CONSOLE_F_MULTIPORT));
    sim_w(VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER | VIRTIO_STATUS_FEATURES_OK);
    sim_w(VIRTIO_MMIO_QUEUE_SEL, 0);
    sim_w(VIRTIO_MMIO_QUEUE_NUM, 8);
    sim_w(VIRTIO_MMIO_QUEUE_DESC_LOW, (uint32_t)SIM_RAM_IPA);
    sim_w(VIRTIO_MMIO_QUEUE_DESC_HIGH, 1); /* 4 GiB above: not Linux's RAM */
    sim_w(VIRTIO_MMIO_QUEUE_DRIVER_LOW, (uint32_t)SIM_RAM_IPA + 0x1000u);
    sim_w(VIRTIO_MMIO_QUEUE_DEVICE_LOW, (uint32_t)SIM_RAM_IPA + 0x2000u);
    sim_w(VIRTIO_MMIO_QUEUE_READY, 1);
}

static void bad_no_version_1(void)
{
    sim_w(VIRTIO_MMIO_STATUS, 0);
    sim_w(VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACKNOWLEDGE);
    sim_w(VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER);
    sim_set_features(1ull << VIRTIO_CONSOLE_F_MULTIPORT);
    sim_w(VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER | VIRTIO_STATUS_FEATURES_OK);
}

static void bad_unoffered_feature(void)
{
    sim_w(VIRTIO_MMIO_STATUS, 0);
    sim_w(VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACKNOWLEDGE);
    sim_w(VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER);
    sim_set_features((1ull << VIRTIO_F_VERSION_1) | (1ull << VIRTIO_F_INDIRECT_DESC));
    sim_w(VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER | VIRTIO_STATUS_FEATURES_OK);
}

static void bad_driver_ok_early(void)
{
    sim_w(VIRTIO_MMIO_STATUS, 0);
    sim_w(VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACKNOWLEDGE);
    sim_w(VIRTIO_MMIO_STATUS, VIRTIO_STATUS_ACKNOWLEDGE | VIRTIO_STATUS_DRIVER | VIRTIO_STATUS_DRIVER_OK);
}

static void bad_features_late(void)
{
    sim_w(VIRTIO_MMIO_DRIVER_FEATURES, 1); /* after DRIVER_OK */
}

struct bad_case {
    const char *name;
    void (*fn)(void);
    const char *reason; /* a piece of the log line */
};

/* One write's head named twice in one notification: the second entry was published while the device
 * held the head (Linux reuses a head only after reading it in the used ring). */
static void bad_same_head_twice(void)
{
    qref(1).desc[0] = (struct virtq_desc){sim.q[1].buf_ipa[0], 8, 0, 0};
    avail_raw(1, 0);
    avail_raw(1, 0);
    sim_notify(1);
}

/* A write the device holds (to_rtos full) named again in a later notification: refused when the
 * device comes to that entry, once the rtos made room for the rest of the write. */
static void bad_held_head_again(void)
{
    qref(1).desc[0] = (struct virtq_desc){sim.q[1].buf_ipa[0], 1024, 0, 0}; /* 4 times the ring */
    avail_raw(1, 0);
    sim_notify(1);
    CHECK(!sim_needs_reset());
    avail_raw(1, 0);
    sim_notify(1);
    uint8_t b[256];
    for (unsigned k = 0; k < 8u && !sim_needs_reset(); k++) {
        (void)sim_rtos_read(0, b, sizeof(b));
        sim_settle();
    }
}

static const struct bad_case bad_cases[] = {
    {"same head twice", bad_same_head_twice, "already in flight"},
    {"held head again", bad_held_head_again, "already in flight"},
    {"transmit chain loop", bad_tx_loop, "a loop"},
    {"descriptor pointing at itself", bad_tx_self_loop, "a loop"},
    {"buffer past the end of RAM", bad_tx_outside, "outside the partition's RAM"},
    {"buffer below RAM", bad_tx_below, "outside the partition's RAM"},
    {"buffer address wrapping", bad_tx_wrapping_address, "outside the partition's RAM"},
    {"huge length", bad_tx_huge, "outside the partition's RAM"},
    {"next index beyond the table", bad_rx_next_beyond, "beyond the table"},
    {"available index jump", bad_avail_jump, "more than a queue ahead"},
    {"available index moved back", bad_avail_wrap_back, "more than a queue ahead"},
    {"head beyond the table", bad_head_index, "beyond the descriptor table"},
    {"head 0xffff", bad_head_index_high, "beyond the descriptor table"},
    {"writable buffer to transmit", bad_tx_writable, "device-writable buffer in a transmit queue"},
    {"readable receive buffer", bad_rx_readable, "device-readable buffer in a receive queue"},
    {"empty receive buffer", bad_rx_empty, "receive buffer of 0 bytes"},
    {"indirect descriptor", bad_indirect, "indirect"},
    {"unknown descriptor flag", bad_flags, "unknown descriptor flags"},
    {"short control message", bad_ctrl_short, "shorter than 8 bytes"},
    {"control message for a missing port", bad_ctrl_port, "does not exist"},
    {"unknown control event", bad_ctrl_event, "unknown control event"},
    {"control receive buffer too small", bad_ctrl_rx_small, "too small"},
    {"notify of a missing queue", bad_notify_queue, "does not exist"},
    {"16-bit register write", bad_register_width, "32-bit"},
    {"unaligned register write", bad_register_unaligned, "32-bit"},
    {"write to a read-only register", bad_readonly_register, "read-only"},
    {"queue register while ready", bad_queue_while_ready, "while the queue is ready"},
    {"status bits cleared", bad_status_clear, "cleared without a reset"},
    {"unknown status bit", bad_status_bits, "unknown device status bits"},
    {"queue size 0", bad_size_zero, "queue size"},
    {"queue size 12", bad_size_odd, "queue size"},
    {"queue size above the maximum", bad_size_big, "queue size"},
    {"queue size 2^31", bad_size_huge, "queue size"},
    {"used ring past the end of RAM", bad_ring_outside, "outside the partition's RAM"},
    {"misaligned descriptor table", bad_ring_misaligned, "misaligned"},
    {"ring above 4 GiB", bad_ring_high_half, "outside the partition's RAM"},
    {"VERSION_1 not accepted", bad_no_version_1, "VIRTIO_F_VERSION_1"},
    {"feature not offered", bad_unoffered_feature, "does not offer"},
    {"DRIVER_OK before FEATURES_OK", bad_driver_ok_early, "out of order"},
    {"features after negotiation", bad_features_late, "outside feature negotiation"},
};

static void run_bad_case(const struct bad_case *c)
{
    sim_setup(2, small);
    connect_all();
    CHECK(echo(0, 300, 1));
    hyp_log[0] = '\0';
    sim.rtos_ev[0] = 0;
    c->fn();
    sim_settle();
    uint32_t status = sim_r(VIRTIO_MMIO_STATUS);
    bool needs_reset = (status & VIRTIO_STATUS_DEVICE_NEEDS_RESET) != 0;
    CHECK(needs_reset);
    CHECK((sim_r(VIRTIO_MMIO_INTERRUPT_STATUS) & VIRTIO_MMIO_INT_CONFIG) != 0 ||
          strstr(hyp_log, "device needs reset") != NULL);
    if (strstr(hyp_log, "rtmux: vbus: linux: ") == NULL || strstr(hyp_log, "device needs reset") == NULL ||
        strstr(hyp_log, c->reason) == NULL) {
        fprintf(stderr, "%s: log line: %s", c->name, hyp_log);
        CHECK(false);
    }
    /* The rtos's channel is closed (Linux's ports are dead); the rtos itself is untouched. */
    CHECK(!vbus_ep_connected(&sim.ep[0]));
    /* The device stays stopped until Linux resets it, then works again. */
    sim_w(VIRTIO_MMIO_QUEUE_NOTIFY, 1);
    CHECK(sim_needs_reset());
    CHECK(sim_probe());
    sim_rtos_open(0); /* a case may have closed it */
    sim_settle();
    sim_port_open(0);
    sim_port_open(1);
    sim_settle();
    CHECK(vbus_ep_connected(&sim.ep[0]) && echo(0, 5000, 2) && echo(1, 100, 3));
    CHECK(!sim_needs_reset());
}

/* ------------------------------------------------------------------------------------------------ */

static int run(const char *name, void (*fn)(void))
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        hyp_log_quiet = true;
        fn();
        if (unit_failures != 0 || getenv("VBUS_TEST_VERBOSE") != NULL) {
            fprintf(stderr, "vbus: %s: %d of %d checks failed\n", name, unit_failures, unit_checks);
        }
        _exit(unit_failures != 0 ? 1 : 0);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    bool ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
    if (!ok) {
        fprintf(stderr, "vbus: %s: FAILED (status 0x%x)\n", name, st);
    }
    return ok ? 0 : 1;
}

static const struct bad_case *current_bad;

static void bad_child(void)
{
    run_bad_case(current_bad);
}

int main(void)
{
    int failed = 0, cases = 0;
    static const struct {
        const char *name;
        void (*fn)(void);
    } tests[] = {
        {"handshake", test_handshake},
        {"round trips", test_round_trips},
        {"full both ways", test_full_both_ways},
        {"reconnect", test_reconnect},
        {"rtos restart", test_rtos_restart},
        {"linux reset", test_linux_reset},
        {"index wrap", test_index_wrap},
        {"virtq limits", test_virtq_limits},
        {"broken: control messages back", test_broken_returns_control},
        {"stats port", test_stats_port},
        {"messages whole or not at all", test_write_all},
        {"pass bounded", test_pass_bounded},
        {"pass steps aside for the rtos", test_pass_steps_aside_for_the_rtos},
    };
    for (unsigned i = 0; i < sizeof(tests) / sizeof(tests[0]); i++, cases++) {
        failed += run(tests[i].name, tests[i].fn);
    }
    for (unsigned i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++, cases++) {
        current_bad = &bad_cases[i];
        failed += run(bad_cases[i].name, bad_child);
    }
    printf("hyp vbus: %d cases (%u bad inputs, each ending in NEEDS_RESET), %d failed\n", cases,
           (unsigned)(sizeof(bad_cases) / sizeof(bad_cases[0])), failed);
    return failed != 0;
}
