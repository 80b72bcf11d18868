/*
 * The console drain on a CPU the rtos shares with Linux (hyp/core/conmux.c): it goes in steps and asks
 * before every step, the first one too, whether the rtos needs the CPU soon (vgic_rtos_soon). A drain
 * that took its first step before asking made the rtos's timer wait for it when the hypervisor's
 * console tick came just before the rtos's deadline: a line of ~150 characters, 1.4-3.3 us late every
 * ~31 s of the demo on configs/qemu-virt-1cpu.toml (BENCHMARKS.md, "Shared CPU").
 *
 * The rtos partition's console ring holds lines; the stand-in for vgic_rtos_soon answers "not soon" a
 * given number of times, then "soon", and records how far the drain had gone at each question.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "arch/timer.h"
#include "arch/vgic.h"
#include "check.h"
#include "drivers/gic.h"
#include "drivers/uart.h"
#include "hyp/conmux.h"
#include "hyp/console.h"
#include "hyp/partition.h"
#include "hyp/vcpu.h"
#include "hyp/vuart.h"
#include "lib/conring.h"

#define RING_SIZE 4096u
#define MAX_ASKS  256u

struct partition hyp_part[HYP_MAX_PARTITIONS];
unsigned hyp_nparts;
struct vcpu hyp_vcpu[HYP_MAX_CPUS];

/* What reached the console: complete lines, each ended by '\n'. */
static char console[16384];
static size_t console_len;
static unsigned console_lines;

/* vgic_rtos_soon: "not soon" while not_soon > 0 (counting down), then "soon". At each question, how many
 * ring bytes the drain had taken and how many lines it had written. */
static unsigned not_soon;
static unsigned asks;
static uint32_t ask_ring[MAX_ASKS];
static unsigned ask_lines[MAX_ASKS];

bool vgic_rtos_soon(const struct vcpu *v, uint64_t within)
{
    (void)v;
    (void)within;
    if (asks < MAX_ASKS) {
        ask_ring[asks] = hyp_part[0].con.ring_tail;
        ask_lines[asks] = console_lines;
    }
    asks++;
    if (not_soon > 0) {
        not_soon--;
        return false;
    }
    return true;
}

void con_line(const char *tag, const char *s, size_t n, bool complete)
{
    (void)tag;
    CHECK(console_len + n + 1u <= sizeof(console));
    memcpy(console + console_len, s, n);
    console_len += n;
    if (complete) {
        console[console_len++] = '\n';
        console_lines++;
    }
}

size_t con_room(void)
{
    return CON_OUT_SIZE;
}

void con_flush(void) {}
void con_set_paced(bool on)
{
    (void)on;
}
void arch_hyp_timer_arm(unsigned hz)
{
    (void)hz;
}
void gic_spi_route(unsigned intid, uint64_t aff, uint8_t prio)
{
    (void)intid;
    (void)aff;
    (void)prio;
}
void part_printf(struct partition *p, const char *fmt, ...)
{
    (void)p;
    (void)fmt;
}
void uart_rx_irq_enable(void) {}
void uart_rx_irq_clear(void) {}
bool uart_rx_empty(void)
{
    return true;
}
char uart_getc(void)
{
    return 0;
}
void vcpu_report_entries(void) {}
void vgic_levels_changed(struct partition *p, struct vcpu *self)
{
    (void)p;
    (void)self;
}

static struct conring *ring;

/* The rtos appends n copies of a line of len characters (its last one a newline) to its ring. */
static void rtos_prints(unsigned n, unsigned len)
{
    for (unsigned l = 0; l < n; l++) {
        for (unsigned i = 0; i < len; i++) {
            ring->data[ring->head % RING_SIZE] = i + 1u == len ? '\n' : (char)('a' + (char)(i % 26u));
            ring->head++;
        }
    }
}

static void drain(unsigned answers_not_soon)
{
    not_soon = answers_not_soon;
    asks = 0;
    con_drain(VUART_DRAIN_TICK, &hyp_vcpu[0]);
}

int main(void)
{
    ring = calloc(1, sizeof(*ring) + RING_SIZE);
    CHECK(ring != NULL);
    struct partition *p = &hyp_part[0];
    p->name = "rtos";
    p->tag = "rtos";
    p->kind = PART_RTOS;
    p->state = PART_RUNNING;
    p->con.ring = ring;
    p->con.ring_size = RING_SIZE;
    p->con.ring_on = true;
    vuart_reset(&p->con.uart);
    hyp_nparts = 1;
    conmux_init(0, 0x14, false);

    /* The rtos is due at once: the drain takes nothing, not even a first step. */
    rtos_prints(1, 20);
    drain(0);
    CHECK(asks >= 1);
    CHECK(p->con.ring_tail == 0 && console_lines == 0 && console_len == 0);

    /* Not due: everything goes out, the line whole. */
    drain(1000);
    CHECK(p->con.ring_tail == 20 && console_lines == 1 && console_len == 20);

    /* A backlog of long lines (the demo's status line is ~150 characters), the rtos due after k answers:
     * nothing moves after the answer "soon", and between two questions the drain takes at most one step
     * (32 characters from the ring, at most one line out). */
    for (unsigned k = 0; k < 12; k++) {
        uint32_t tail0 = p->con.ring_tail;
        unsigned lines0 = console_lines;
        rtos_prints(4, 150);
        drain(k);
        CHECK(asks >= k + 1u && asks <= MAX_ASKS);
        CHECK(ask_ring[0] == tail0 && ask_lines[0] == lines0);
        for (unsigned i = 1; i <= k; i++) {
            CHECK(ask_ring[i] - ask_ring[i - 1u] <= 32u);
            CHECK(ask_lines[i] - ask_lines[i - 1u] <= 1u);
        }
        for (unsigned i = k + 1u; i < asks; i++) {
            CHECK(ask_ring[i] == ask_ring[k] && ask_lines[i] == ask_lines[k]);
        }
        CHECK(p->con.ring_tail == ask_ring[k] && console_lines == ask_lines[k]);
        drain(1000); /* the rest, before the next round */
        CHECK(p->con.ring_tail == ring->head);
    }
    free(ring);
    UNIT_DONE("test_hyp_conmux");
}
