/*
 * Message ring: capacity, FIFO order across wrap-around, exact copies.
 */
#include "harness.h"

struct msg {
    uint32_t a;
    uint16_t b;
    uint8_t c[3];
};

int main(void)
{
    static struct msg storage[5];
    struct k_ring r;
    struct msg m, out;
    k_ring_init(&r, storage, sizeof(struct msg), 5);
    CHECK(!k_ring_get(&r, &out));

    uint32_t next_in = 0, next_out = 0;
    for (unsigned round = 0; round < 50; round++) {
        unsigned puts = 1 + round % 5;
        for (unsigned i = 0; i < puts; i++) {
            memset(&m, 0, sizeof(m));
            m.a = next_in;
            m.b = (uint16_t)(next_in * 3u);
            m.c[2] = (uint8_t)next_in;
            size_t before = r.count;
            bool ok = k_ring_put(&r, &m);
            CHECK(ok == (before < 5));
            CHECK(r.count == (ok ? before + 1 : before));
            if (ok) {
                next_in++;
            }
        }
        CHECK(r.count <= 5);
        unsigned gets = 1 + (round * 7u) % 5u;
        for (unsigned i = 0; i < gets && r.count > 0; i++) {
            CHECK(k_ring_get(&r, &out));
            CHECK(out.a == next_out && out.b == (uint16_t)(next_out * 3u) && out.c[2] == (uint8_t)next_out);
            next_out++;
        }
    }
    /* Fill to capacity exactly. */
    while (k_ring_get(&r, &out)) {
    }
    for (unsigned i = 0; i < 5; i++) {
        CHECK(k_ring_put(&r, &m));
    }
    CHECK(!k_ring_put(&r, &m));
    CHECK(r.count == 5);
    UNIT_DONE("ring");
}
