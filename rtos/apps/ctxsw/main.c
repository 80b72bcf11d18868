/*
 * Context-switch benchmark: two threads of equal priority ping-pong through two semaphores. Every
 * hand-over is one rt_sem_give + one blocking rt_sem_take + one switch, so
 * ns per switch = elapsed / switches.
 *
 * Boot argument fp=1 (the default): both threads do an FP addition every round, so every switch moves
 * the FP/SIMD registers too (the kernel moves them only between threads that use them); fp=0: integer
 * threads, the switch without FP/SIMD.
 */
#include "rtos/rtos.h"

static rt_sem_t ping, pong, done;
static rt_thread_t a, b;
RT_STACK_DEFINE(stack_a, 4096);
RT_STACK_DEFINE(stack_b, 4096);
static uint64_t rounds;
static bool use_fp;
static volatile double acc_a, acc_b;

/* Out of line, so that fp=0 threads hold no FP/SIMD instruction at all (GCC would hoist the constant). */
static __attribute__((noinline)) void fp_touch(volatile double *acc)
{
    *acc = *acc + 1.0;
}

static void thread_a(void *arg)
{
    (void)arg;
    for (uint64_t i = 0; i < rounds; i++) {
        if (use_fp) {
            fp_touch(&acc_a);
        }
        (void)rt_sem_give(&ping);
        (void)rt_sem_take(&pong, RT_FOREVER);
    }
    (void)rt_sem_give(&done);
}

static void thread_b(void *arg)
{
    (void)arg;
    for (uint64_t i = 0; i < rounds; i++) {
        (void)rt_sem_take(&ping, RT_FOREVER);
        if (use_fp) {
            fp_touch(&acc_b);
        }
        (void)rt_sem_give(&pong);
    }
}

void rt_main(void)
{
    static const char *const known[] = {"switches", "fp", NULL};
    (void)rt_bootargs_check(known);
    uint64_t switches = rt_bootarg_u64("switches", 20000);
    use_fp = rt_bootarg_u64("fp", 1) != 0;
    rounds = (switches + 1) / 2;
    (void)rt_sem_init(&ping, 0, 1);
    (void)rt_sem_init(&pong, 0, 1);
    (void)rt_sem_init(&done, 0, 1);
    /* Both below main, so main sets up and then waits; b first so it is already blocked on ping. */
    (void)rt_thread_create(&b, "pong", thread_b, NULL, stack_b, sizeof(stack_b), 100);
    (void)rt_thread_create(&a, "ping", thread_a, NULL, stack_a, sizeof(stack_a), 100);
    uint64_t sa = rt_thread_switch_count(&a), sb = rt_thread_switch_count(&b);
    rt_time_t t0 = rt_time_now();
    (void)rt_sem_take(&done, RT_FOREVER);
    rt_time_t t1 = rt_time_now();
    uint64_t n = rt_thread_switch_count(&a) - sa + rt_thread_switch_count(&b) - sb;
    uint64_t total = t1 - t0;
    /* ns per switch with 3 decimals, integer arithmetic. */
    uint64_t milli = n != 0 ? total * 1000u / n : 0;
    rt_printf("ctxsw: %s\n", use_fp ? "both threads use FP/SIMD (fp=1): every switch moves its registers"
                                    : "integer threads (fp=0): no FP/SIMD switched");
    rt_printf("CTX| switches %lu total_ns %lu ns_per_switch %lu.%03lu\n", (unsigned long)n,
              (unsigned long)total, (unsigned long)(milli / 1000u), (unsigned long)(milli % 1000u));
    rt_system_off();
}
