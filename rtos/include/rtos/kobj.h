/*
 * Kernel object layouts. They are public only so that applications can allocate objects statically;
 * fields are private to the kernel: use the rt_ API.
 */
#ifndef RTOS_KOBJ_H
#define RTOS_KOBJ_H

#include <stddef.h>
#include <stdint.h>

#include "arch/context.h"
#include "rtos/list.h"
#include "rtos/types.h"

/* Entry of the timer queue: fires expire() once the counter reaches deadline (counter ticks). */
struct k_timeout {
    rt_list_t node;
    uint64_t deadline;
    void (*expire)(struct k_timeout *to);
};

/* Threads blocked on one object, highest priority first, FIFO within a priority. */
struct k_waitq {
    rt_list_t waiters;
};

enum k_thread_state {
    K_THREAD_UNUSED = 0, /* never created, or zeroed */
    K_THREAD_READY,      /* in the ready queue; the running thread is READY too */
    K_THREAD_BLOCKED,    /* on a wait queue and/or the timer queue */
    K_THREAD_DEAD,       /* returned, exited or killed */
};

struct rt_mutex;
struct rt_event;

typedef struct rt_thread {
    struct arch_context ctx; /* first: arch_switch takes &thread->ctx */
    uint32_t magic;
    uint8_t base_prio; /* priority set by the application */
    uint8_t prio;      /* effective priority: base raised by priority inheritance */
    uint8_t state;     /* enum k_thread_state */
    uint8_t uses_fp;   /* has used FP/SIMD (its first use trapped): its registers are switched */
    const char *name;
    rt_list_t qnode;             /* link in the ready queue or in a wait queue */
    struct k_waitq *waitq;       /* wait queue blocked on, or NULL */
    struct rt_mutex *wait_mutex; /* mutex blocked on (for transitive inheritance), or NULL */
    rt_list_t owned_mutexes;     /* mutexes held, for recomputing the inherited priority */
    struct k_timeout timeout;
    int wait_result;
    union {
        void *msg;      /* message queue: where to copy from/to */
        uint32_t ev[3]; /* event flags: wanted, options, observed */
    } wait;
    uint8_t *stack_base;
    size_t stack_size;
    void (*entry)(void *);
    void *arg;
    uint64_t period;     /* periodic threads: period in counter ticks, 0 = not periodic */
    uint64_t release;    /* current release point in counter ticks */
    uint64_t slice;      /* round-robin slice in counter ticks, 0 = none */
    uint64_t slice_left; /* of the current slice, while switched out by a preemption (ticks) */
    struct k_waitq joiners;
    struct rt_event *exit_event; /* rt_thread_on_exit: set exit_bits in it when the thread ends */
    uint32_t exit_bits;
    uint64_t switches_in; /* times this thread was switched to */
    uint64_t cpu_ticks;   /* counter ticks it ran, up to its last switch away (sched.c) */
    uint32_t id;          /* unique since boot, from 1: the trace's and the statistics' name for it */
    uint32_t slot;        /* its entry in the kernel's thread table, K_SLOT_FULL or K_SLOT_NONE (state.c) */
    uint64_t wakeups;     /* times made ready from blocked */
    uint64_t wake_stamp;  /* counter value it became ready at (its deadline, for a timeout), 0 once it ran */
    uint64_t worst_wake;  /* longest from wake_stamp to its switch in, counter ticks */
} rt_thread_t;

typedef struct rt_sem {
    uint32_t magic;
    uint32_t count;
    uint32_t max;
    struct k_waitq waitq;
} rt_sem_t;

typedef struct rt_mutex {
    uint32_t magic;
    rt_thread_t *owner;
    rt_list_t owner_node; /* link in owner->owned_mutexes */
    struct k_waitq waitq;
} rt_mutex_t;

/* Fixed-size message ring over caller-provided storage. */
struct k_ring {
    uint8_t *buf;
    size_t msg_size;
    size_t capacity; /* messages */
    size_t head;     /* index of the oldest message */
    size_t count;
};

typedef struct rt_msgq {
    uint32_t magic;
    struct k_ring ring;
    struct k_waitq senders;
    struct k_waitq receivers;
} rt_msgq_t;

typedef struct rt_event {
    uint32_t magic;
    uint32_t flags;
    struct k_waitq waitq;
} rt_event_t;

#endif /* RTOS_KOBJ_H */
