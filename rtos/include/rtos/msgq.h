/*
 * Message queues of fixed-size messages over caller-provided storage. Messages are copied; a send to
 * a queue with a waiting receiver hands the message over directly. Send/receive with RT_NO_WAIT are
 * safe from interrupt handlers.
 */
#ifndef RTOS_MSGQ_H
#define RTOS_MSGQ_H

#include <stddef.h>
#include <stdint.h>

#include "rtos/kobj.h"
#include "rtos/types.h"

/* Storage for `capacity` messages of `msg_size` bytes. */
#define RT_MSGQ_STORAGE_DEFINE(name, msg_size, capacity) \
    static uint8_t name[(msg_size) * (capacity)] __attribute__((aligned(16)))

int rt_msgq_init(rt_msgq_t *q, void *storage, size_t msg_size, size_t capacity);
int rt_msgq_send(rt_msgq_t *q, const void *msg, rt_time_t timeout);
int rt_msgq_recv(rt_msgq_t *q, void *msg, rt_time_t timeout);
int rt_msgq_count(const rt_msgq_t *q, size_t *count);

#endif /* RTOS_MSGQ_H */
