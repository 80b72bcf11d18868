/*
 * The V-Bus's hardware side for the rtos: its description in the DTB and its two doorbells, both SGIs.
 * The hypervisor's (VBUS_SGI_TO_RTOS) is taken directly, as any interrupt of the rtos; the rtos's goes
 * to a Linux CPU, where the hypervisor takes it at EL2, through ICC_SGI1R_EL1, which does not trap on
 * the rtos's CPU (HCR_EL2.IMO is clear there). So the rtos never enters the hypervisor on this path.
 */
#include "drivers/vbus.h"

#include "../kernel/kernel.h"
#include "drivers/intc.h"
#include "lib/string.h"
#include "rtos/console.h"
#include "rtos/types.h"

static uint64_t kick_aff;
static unsigned kick_sgi;
static bool kick_on;

static uint32_t be32(const uint8_t *b)
{
    return ((uint32_t)b[0] << 24) | ((uint32_t)b[1] << 16) | ((uint32_t)b[2] << 8) | b[3];
}

static uint64_t be64(const uint8_t *b)
{
    return ((uint64_t)be32(b) << 32) | be32(b + 4);
}

static bool ring_ok(uint64_t region, uint32_t off, uint32_t size)
{
    return (size & (size - 1u)) == 0 && size >= VBUS_RING_MIN && size <= VBUS_RING_MAX &&
           off % VBUS_ALIGN == 0 && off >= sizeof(struct vbus_region) &&
           (uint64_t)off + VBUS_RING_HEADER_SIZE + size <= region;
}

static int bad(const char *what)
{
    rt_printf("vbus: /rtmux-vbus in the DTB: %s; the V-Bus is not used\n", what);
    return -1;
}

int vbus_dt_read(const void *dtb, struct vbus_dt *out)
{
    uint32_t len = 0;
    const char *compat = k_fdt_prop(dtb, "/rtmux-vbus", "compatible", &len);
    if (compat == NULL) {
        return 0;
    }
    if (len < 11 || memcmp(compat, "rtmux,vbus", 11) != 0) {
        return bad("not compatible \"rtmux,vbus\"");
    }
    const uint8_t *reg = k_fdt_prop(dtb, "/rtmux-vbus", "reg", &len);
    if (reg == NULL || len != 16) {
        return bad("reg is not <address-hi address-lo size-hi size-lo>");
    }
    uint64_t base = be64(reg), size = be64(reg + 8);
    const uint8_t *bell = k_fdt_prop(dtb, "/rtmux-vbus", "rtmux,doorbell", &len);
    if (bell == NULL || len != 16) {
        return bad("rtmux,doorbell is not <sgi-to-rtos sgi-to-hyp mpidr-hi mpidr-lo>");
    }
    memset(out, 0, sizeof(*out));
    out->region = (struct vbus_region *)(uintptr_t)base;
    out->size = size;
    out->sgi_to_rtos = be32(bell);
    out->sgi_to_hyp = be32(bell + 4);
    /* MPIDR as a cpu node's reg writes it: Aff3 in the high cell, Aff2..Aff0 in the low one. */
    out->hyp_aff = ((uint64_t)(be32(bell + 8) & 0xffu) << 24) | (be32(bell + 12) & 0xffffffu);
    if (base == 0 || base % VBUS_ALIGN != 0 || size < sizeof(struct vbus_region) || out->sgi_to_rtos >= 16u ||
        out->sgi_to_hyp >= 16u) {
        return bad("region or doorbell SGIs out of range");
    }
    for (unsigned n = 0; n < VBUS_MAX_CHANNELS; n++) {
        static const char hex[] = "0123456789abcdef";
        char path[32] = "/rtmux-vbus/channel@";
        size_t at = sizeof("/rtmux-vbus/channel@") - 1u;
        if (n >= 16u) {
            path[at++] = hex[n / 16u];
        }
        path[at++] = hex[n % 16u];
        path[at] = '\0';
        const char *label = k_fdt_prop(dtb, path, "label", &len);
        if (label == NULL) {
            break;
        }
        struct vbus_dt_chan *c = &out->chan[n];
        if (len < 2 || len > VBUS_NAME_SIZE || label[len - 1u] != '\0') {
            return bad("a channel's label is empty, too long or not terminated");
        }
        memcpy(c->name, label, len);
        const uint8_t *lay = k_fdt_prop(dtb, path, "rtmux,layout", &len);
        if (lay == NULL || len != 20) {
            return bad("a channel's rtmux,layout is not five cells");
        }
        c->chan_off = be32(lay);
        c->to_linux_off = be32(lay + 4);
        c->to_linux_size = be32(lay + 8);
        c->to_rtos_off = be32(lay + 12);
        c->to_rtos_size = be32(lay + 16);
        if (c->chan_off % VBUS_ALIGN != 0 || c->chan_off < sizeof(struct vbus_region) ||
            (uint64_t)c->chan_off + sizeof(struct vbus_chan) > size ||
            !ring_ok(size, c->to_linux_off, c->to_linux_size) ||
            !ring_ok(size, c->to_rtos_off, c->to_rtos_size)) {
            return bad("a channel's layout leaves the region or its ring sizes are not powers of two");
        }
        out->nchan = n + 1u;
    }
    if (out->nchan == 0) {
        return bad("no channel@0");
    }
    return 1;
}

int vbus_doorbell_attach(const struct vbus_dt *dt, unsigned prio, rt_irq_handler_t handler)
{
    int rc = k_irq_attach_kernel(RT_IRQ_SGI(dt->sgi_to_rtos), prio, RT_IRQ_EDGE, handler);
    if (rc == RT_OK) {
        rc = rt_irq_enable(RT_IRQ_SGI(dt->sgi_to_rtos));
    }
    kick_aff = dt->hyp_aff;
    kick_sgi = dt->sgi_to_hyp;
    kick_on = rc == RT_OK;
    return rc;
}

void vbus_kick(void)
{
    if (kick_on) {
        intc_send_sgi(kick_aff, kick_sgi);
    }
}
