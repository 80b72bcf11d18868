/*
 * POSIX threads: create and join (return values), detach (memory reclaimed), pthread_self in main, in
 * pthreads and in a thread of the rtos's own API, attributes and their EINVAL paths, caller-given
 * stacks, keys with destructors, once from several threads, cleanup handlers, cancellation, scheduling
 * parameters; at the end main leaves with pthread_exit and another thread joins it.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "rtos/thread.h"
#include "rtos/time.h"

static void *add_one(void *arg)
{
    return (void *)((uintptr_t)arg + 1u);
}

static pthread_t seen_self;
static void *report_self(void *arg)
{
    (void)arg;
    seen_self = pthread_self();
    return NULL;
}

/* ---- detached threads: their memory comes back */
static volatile unsigned detached_ran;
static void *detached(void *arg)
{
    (void)arg;
    detached_ran++;
    return NULL;
}

/* ---- a thread of the rtos's own API */
static pthread_t native_self, native_self2;
static int native_join_err;
static void native_entry(void *arg)
{
    (void)arg;
    native_self = pthread_self();
    native_self2 = pthread_self();
    native_join_err = pthread_join(native_self, NULL);
}

/* ---- keys */
static pthread_key_t key, key2;
static unsigned destructed;
static void *destructed_value;
static void destructor(void *v)
{
    destructed++;
    destructed_value = v;
}
static unsigned again_calls;
static void destructor_again(void *v)
{
    /* Sets its value again: called in every round, PTHREAD_DESTRUCTOR_ITERATIONS times at most. */
    again_calls++;
    (void)pthread_setspecific(key2, v);
}
static void *key_user(void *arg)
{
    CHECK(pthread_getspecific(key) == NULL);
    CHECK_EQ(pthread_setspecific(key, arg), 0);
    CHECK(pthread_getspecific(key) == arg);
    CHECK_EQ(pthread_setspecific(key2, arg), 0);
    return NULL;
}

/* ---- once */
static pthread_once_t once = PTHREAD_ONCE_INIT;
static volatile unsigned once_runs;
static volatile int once_done;
static void once_init(void)
{
    once_runs++;
    for (int i = 0; i < 5; i++) {
        (void)sched_yield(); /* the other callers run meanwhile and must wait */
    }
    once_done = 1;
}
static volatile unsigned once_ok;
static void *once_caller(void *arg)
{
    (void)arg;
    CHECK_EQ(pthread_once(&once, once_init), 0);
    if (once_done) {
        once_ok++;
    }
    return NULL;
}

/* ---- cleanup handlers */
static char cleanup_log[8];
static unsigned cleanup_len;
static void log_cleanup(void *arg)
{
    cleanup_log[cleanup_len++] = (char)(uintptr_t)arg;
}
static void *cleanup_user(void *arg)
{
    (void)arg;
    pthread_cleanup_push(log_cleanup, (void *)'a');
    pthread_cleanup_push(log_cleanup, (void *)'b');
    pthread_cleanup_push(log_cleanup, (void *)'x');
    pthread_cleanup_pop(0); /* not run */
    pthread_cleanup_push(log_cleanup, (void *)'c');
    pthread_cleanup_pop(1);  /* run now */
    pthread_exit((void *)7); /* runs b, then a */
    pthread_cleanup_pop(0);
    pthread_cleanup_pop(0);
    return NULL;
}

/* ---- cancellation */
static volatile int cancel_reached;
static void *cancel_spinner(void *arg)
{
    (void)arg;
    int old;
    CHECK_EQ(pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old), 0);
    CHECK_EQ(old, PTHREAD_CANCEL_ENABLE);
    while (!cancel_reached) {
        (void)rt_sleep(RT_MSEC(1));
        pthread_testcancel(); /* disabled: nothing */
    }
    CHECK_EQ(pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL), 0);
    pthread_testcancel(); /* acts here */
    CHECK(0);             /* never reached */
    return NULL;
}
static pthread_t sleeper;
static void *long_sleeper(void *arg)
{
    (void)arg;
    (void)rt_sleep(RT_MSEC(50));
    return (void *)5;
}
static void *cancelled_joiner(void *arg)
{
    (void)arg;
    pthread_cleanup_push(log_cleanup, (void *)'j');
    (void)pthread_join(sleeper, NULL); /* a cancellation point */
    pthread_cleanup_pop(0);
    CHECK(0);
    return NULL;
}

/* ---- a thread that ends without pthread_exit (the rtos's own call) is still joined */
static void *rt_exiter(void *arg)
{
    (void)arg;
    rt_thread_exit();
}

/* ---- scheduling parameters */
static void *param_reader(void *arg)
{
    int *out = arg;
    struct sched_param p;
    (void)pthread_getschedparam(pthread_self(), &out[0], &p);
    out[1] = p.sched_priority;
    return NULL;
}

/* ---- main leaves with pthread_exit, and is joined */
static pthread_t main_thread;
static void *main_joiner(void *arg)
{
    (void)arg;
    void *ret = NULL;
    CHECK_EQ(pthread_join(main_thread, &ret), 0);
    CHECK(ret == (void *)42);
    printf("pthread: %d passed, %d failed\n", check_passed, check_failed);
    exit(check_failed);
}

int main(void)
{
    /* create and join: the return value; a second join finds no thread */
    pthread_t t;
    void *ret = NULL;
    CHECK_EQ(pthread_create(&t, NULL, add_one, (void *)41), 0);
    CHECK_EQ(pthread_join(t, &ret), 0);
    CHECK(ret == (void *)42);
    CHECK_EQ(pthread_join(t, NULL), ESRCH);

    /* pthread_self: main, a pthread, a native thread */
    main_thread = pthread_self();
    CHECK(main_thread != NULL);
    CHECK(pthread_equal(main_thread, pthread_self()));
    CHECK_EQ(pthread_create(&t, NULL, report_self, NULL), 0);
    pthread_t created = t;
    CHECK_EQ(pthread_join(t, NULL), 0);
    CHECK(pthread_equal(seen_self, created));
    CHECK(!pthread_equal(seen_self, main_thread));
    static rt_thread_t native;
    RT_STACK_DEFINE(native_stack, 8192);
    CHECK_EQ(rt_thread_create(&native, "native", native_entry, NULL, native_stack, sizeof(native_stack), 100),
             0);
    CHECK_EQ(rt_thread_join(&native, RT_FOREVER), 0);
    CHECK(native_self != NULL && pthread_equal(native_self, native_self2));
    CHECK(!pthread_equal(native_self, main_thread));
    CHECK_EQ(native_join_err, EDEADLK);

    /* join errors */
    CHECK_EQ(pthread_join(pthread_self(), NULL), EDEADLK);
    CHECK_EQ(pthread_join(NULL, NULL), ESRCH);
    CHECK_EQ(pthread_detach(NULL), ESRCH);
    CHECK_EQ(pthread_create(NULL, NULL, add_one, NULL), EINVAL);
    CHECK_EQ(pthread_create(&t, NULL, NULL, NULL), EINVAL);

    /* detached threads: 300 stacks of 16 KiB go through a 1 MiB heap, so each is reclaimed */
    pthread_attr_t attr;
    CHECK_EQ(pthread_attr_init(&attr), 0);
    CHECK_EQ(pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED), 0);
    int create_err = 0;
    for (int i = 0; i < 300 && create_err == 0; i++) {
        create_err = pthread_create(&t, &attr, detached, NULL);
        (void)rt_sleep(RT_USEC(100)); /* lets it run and end */
    }
    CHECK_EQ(create_err, 0);
    CHECK_EQ(detached_ran, 300);
    /* a joinable thread detached after it ended, and one detached while it runs */
    CHECK_EQ(pthread_create(&t, NULL, add_one, NULL), 0);
    (void)rt_sleep(RT_MSEC(1));
    CHECK_EQ(pthread_detach(t), 0);
    CHECK_EQ(pthread_create(&t, NULL, long_sleeper, NULL), 0);
    CHECK_EQ(pthread_detach(t), 0);
    CHECK_EQ(pthread_detach(t), EINVAL);
    CHECK_EQ(pthread_join(t, NULL), EINVAL);

    /* attributes */
    int v;
    size_t sz;
    void *addr;
    struct sched_param sp;
    CHECK_EQ(pthread_attr_getdetachstate(&attr, &v), 0);
    CHECK_EQ(v, PTHREAD_CREATE_DETACHED);
    CHECK_EQ(pthread_attr_setdetachstate(&attr, 7), EINVAL);
    CHECK_EQ(pthread_attr_getstacksize(&attr, &sz), 0);
    CHECK_EQ(sz, RTMUX_PTHREAD_STACK_DEFAULT);
    CHECK_EQ(pthread_attr_setstacksize(&attr, PTHREAD_STACK_MIN - 1), EINVAL);
    CHECK_EQ(pthread_attr_setstacksize(&attr, 32768), 0);
    CHECK_EQ(pthread_attr_getinheritsched(&attr, &v), 0);
    CHECK_EQ(v, PTHREAD_INHERIT_SCHED);
    CHECK_EQ(pthread_attr_setinheritsched(&attr, 5), EINVAL);
    CHECK_EQ(pthread_attr_getschedpolicy(&attr, &v), 0);
    CHECK_EQ(v, SCHED_FIFO);
    CHECK_EQ(pthread_attr_setschedpolicy(&attr, 99), EINVAL);
    CHECK_EQ(pthread_attr_setschedpolicy(&attr, SCHED_RR), 0);
    sp.sched_priority = 0;
    CHECK_EQ(pthread_attr_setschedparam(&attr, &sp), EINVAL);
    sp.sched_priority = 256;
    CHECK_EQ(pthread_attr_setschedparam(&attr, &sp), EINVAL);
    sp.sched_priority = 77;
    CHECK_EQ(pthread_attr_setschedparam(&attr, &sp), 0);
    CHECK_EQ(pthread_attr_getschedparam(&attr, &sp), 0);
    CHECK_EQ(sp.sched_priority, 77);
    CHECK_EQ(pthread_attr_setscope(&attr, PTHREAD_SCOPE_PROCESS), ENOTSUP);
    CHECK_EQ(pthread_attr_setscope(&attr, PTHREAD_SCOPE_SYSTEM), 0);
    CHECK_EQ(pthread_attr_getscope(&attr, &v), 0);
    CHECK_EQ(v, PTHREAD_SCOPE_SYSTEM);
    CHECK_EQ(pthread_attr_setguardsize(&attr, 8192), 0);
    CHECK_EQ(pthread_attr_getguardsize(&attr, &sz), 0);
    CHECK_EQ(sz, 8192);
    static uint8_t stack[16384] __attribute__((aligned(16)));
    CHECK_EQ(pthread_attr_setstack(&attr, stack, 100), EINVAL);
    /* any alignment is accepted (the thread uses the 16-byte aligned part) */
    CHECK_EQ(pthread_attr_setstack(&attr, stack + 8, sizeof(stack) - 16), 0);
    CHECK_EQ(pthread_attr_setstack(&attr, NULL, sizeof(stack)), EINVAL);
    CHECK_EQ(pthread_attr_setstack(&attr, stack, sizeof(stack)), 0);
    CHECK_EQ(pthread_attr_getstack(&attr, &addr, &sz), 0);
    CHECK(addr == stack && sz == sizeof(stack));
    CHECK_EQ(pthread_attr_getstackaddr(&attr, &addr), 0);
    CHECK(addr == stack);
    /* a thread on the caller's stack, with explicit SCHED_RR 77 */
    CHECK_EQ(pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_JOINABLE), 0);
    CHECK_EQ(pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED), 0);
    int params[2] = {-1, -1};
    CHECK_EQ(pthread_create(&t, &attr, param_reader, params), 0);
    CHECK_EQ(pthread_join(t, NULL), 0);
    CHECK_EQ(params[0], SCHED_RR);
    CHECK_EQ(params[1], 77);
    /* the same on a stack 8 bytes off 16 at both ends: the thread runs on its aligned part */
    CHECK_EQ(pthread_attr_setstack(&attr, stack + 8, sizeof(stack) - 16), 0);
    params[0] = params[1] = -1;
    CHECK_EQ(pthread_create(&t, &attr, param_reader, params), 0);
    CHECK_EQ(pthread_join(t, NULL), 0);
    CHECK_EQ(params[1], 77);
    /* inherited: main's SCHED_FIFO 128 */
    CHECK_EQ(pthread_create(&t, NULL, param_reader, params), 0);
    CHECK_EQ(pthread_join(t, NULL), 0);
    CHECK_EQ(params[0], SCHED_FIFO);
    CHECK_EQ(params[1], 128);
    CHECK_EQ(pthread_attr_destroy(&attr), 0);
    CHECK_EQ(pthread_attr_destroy(&attr), EINVAL);
    CHECK_EQ(pthread_attr_setstacksize(&attr, 32768), EINVAL);
    CHECK_EQ(pthread_create(&t, &attr, add_one, NULL), EINVAL);
    pthread_attr_t zeroed;
    memset(&zeroed, 0, sizeof(zeroed));
    CHECK_EQ(pthread_attr_getstacksize(&zeroed, &sz), EINVAL);
    CHECK_EQ(pthread_attr_init(NULL), EINVAL);

    /* scheduling parameters */
    int policy;
    CHECK_EQ(pthread_getschedparam(pthread_self(), &policy, &sp), 0);
    CHECK_EQ(policy, SCHED_FIFO);
    CHECK_EQ(sp.sched_priority, 128);
    sp.sched_priority = 300;
    CHECK_EQ(pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp), EINVAL);
    sp.sched_priority = 120;
    CHECK_EQ(pthread_setschedparam(pthread_self(), 42, &sp), EINVAL);
    CHECK_EQ(pthread_setschedparam(pthread_self(), SCHED_RR, &sp), 0);
    CHECK_EQ(pthread_getschedparam(pthread_self(), &policy, &sp), 0);
    CHECK_EQ(policy, SCHED_RR);
    CHECK_EQ(sp.sched_priority, 120);
    CHECK_EQ(pthread_setschedprio(pthread_self(), 0), EINVAL);
    CHECK_EQ(pthread_setschedprio(pthread_self(), 128), 0);
    sp.sched_priority = 128;
    CHECK_EQ(pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp), 0);
    CHECK_EQ(pthread_getschedparam(NULL, &policy, &sp), ESRCH);
    CHECK_EQ(pthread_getschedparam(pthread_self(), NULL, &sp), EINVAL);

    /* keys and destructors */
    CHECK_EQ(pthread_key_create(&key, destructor), 0);
    CHECK_EQ(pthread_key_create(&key2, destructor_again), 0);
    CHECK(key != key2);
    CHECK_EQ(pthread_create(&t, NULL, key_user, (void *)0x1234), 0);
    CHECK_EQ(pthread_join(t, NULL), 0);
    CHECK_EQ(destructed, 1);
    CHECK(destructed_value == (void *)0x1234);
    CHECK_EQ(again_calls, PTHREAD_DESTRUCTOR_ITERATIONS);
    CHECK(pthread_getspecific(key) == NULL); /* main's own value: none */
    CHECK_EQ(pthread_setspecific(key, &key), 0);
    CHECK(pthread_getspecific(key) == &key);
    CHECK_EQ(pthread_key_delete(key), 0);
    CHECK_EQ(pthread_key_delete(key), EINVAL);
    CHECK_EQ(pthread_setspecific(key, &key), EINVAL);
    CHECK(pthread_getspecific(key) == NULL);
    pthread_key_t key3;
    CHECK_EQ(pthread_key_create(&key3, NULL), 0); /* reuses key's slot: its old values are gone */
    CHECK(key3 != key);
    CHECK(pthread_getspecific(key3) == NULL);
    CHECK_EQ(pthread_setspecific(12345, NULL), EINVAL);
    CHECK_EQ(pthread_key_create(NULL, NULL), EINVAL);
    pthread_key_t many[PTHREAD_KEYS_MAX];
    unsigned made = 0;
    while (made < PTHREAD_KEYS_MAX && pthread_key_create(&many[made], NULL) == 0) {
        made++;
    }
    CHECK_EQ(made, PTHREAD_KEYS_MAX - 2); /* key2 and key3 are live */
    pthread_key_t extra;
    CHECK_EQ(pthread_key_create(&extra, NULL), EAGAIN);
    for (unsigned i = 0; i < made; i++) {
        CHECK_EQ(pthread_key_delete(many[i]), 0);
    }

    /* once, from four threads of one priority below main's, and main */
    pthread_t callers[4];
    struct sched_param low = {.sched_priority = 50};
    pthread_attr_t la;
    CHECK_EQ(pthread_attr_init(&la), 0);
    CHECK_EQ(pthread_attr_setinheritsched(&la, PTHREAD_EXPLICIT_SCHED), 0);
    CHECK_EQ(pthread_attr_setschedparam(&la, &low), 0);
    for (int i = 0; i < 4; i++) {
        CHECK_EQ(pthread_create(&callers[i], &la, once_caller, NULL), 0);
    }
    for (int i = 0; i < 4; i++) {
        CHECK_EQ(pthread_join(callers[i], NULL), 0);
    }
    CHECK_EQ(once_runs, 1);
    CHECK_EQ(once_ok, 4);
    CHECK_EQ(pthread_once(&once, once_init), 0);
    CHECK_EQ(once_runs, 1);
    CHECK_EQ(pthread_once(NULL, once_init), EINVAL);

    /* cleanup handlers at pthread_exit: c (popped with 1), then b, a; x never */
    CHECK_EQ(pthread_create(&t, NULL, cleanup_user, NULL), 0);
    CHECK_EQ(pthread_join(t, &ret), 0);
    CHECK(ret == (void *)7);
    CHECK_EQ(cleanup_len, 3);
    CHECK(memcmp(cleanup_log, "cba", 3) == 0);

    /* cancellation: disabled, then acted on at pthread_testcancel */
    CHECK_EQ(pthread_create(&t, &la, cancel_spinner, NULL), 0);
    (void)rt_sleep(RT_MSEC(2));
    CHECK_EQ(pthread_cancel(t), 0);
    (void)rt_sleep(RT_MSEC(2));
    cancel_reached = 1;
    CHECK_EQ(pthread_join(t, &ret), 0);
    CHECK(ret == PTHREAD_CANCELED);
    /* cancelled while blocked in pthread_join: its cleanup handler runs, the target stays joinable */
    cleanup_len = 0;
    CHECK_EQ(pthread_create(&sleeper, &la, long_sleeper, NULL), 0);
    CHECK_EQ(pthread_create(&t, &la, cancelled_joiner, NULL), 0);
    (void)rt_sleep(RT_MSEC(5));
    CHECK_EQ(pthread_cancel(t), 0);
    CHECK_EQ(pthread_join(t, &ret), 0);
    CHECK(ret == PTHREAD_CANCELED);
    CHECK_EQ(cleanup_len, 1);
    CHECK_EQ(cleanup_log[0], 'j');
    CHECK_EQ(pthread_join(sleeper, &ret), 0);
    CHECK(ret == (void *)5);
    CHECK_EQ(pthread_create(&t, NULL, rt_exiter, NULL), 0);
    CHECK_EQ(pthread_join(t, &ret), 0);
    CHECK(ret == PTHREAD_CANCELED);
    CHECK_EQ(pthread_cancel(NULL), ESRCH);
    CHECK_EQ(pthread_setcancelstate(9, NULL), EINVAL);
    CHECK_EQ(pthread_setcanceltype(9, NULL), EINVAL);
    CHECK_EQ(pthread_attr_destroy(&la), 0);

    /* main ends with pthread_exit; the joiner reports and exits */
    CHECK_EQ(pthread_create(&t, NULL, main_joiner, NULL), 0);
    pthread_exit((void *)42);
}
