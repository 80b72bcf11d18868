/*
 * The whole public rtos API.
 */
#ifndef RTOS_RTOS_H
#define RTOS_RTOS_H

#include "rtos/chan.h"
#include "rtos/console.h"
#include "rtos/irq.h"
#include "rtos/msgq.h"
#include "rtos/sync.h"
#include "rtos/system.h"
#include "rtos/thread.h"
#include "rtos/time.h"
#include "rtos/types.h"

#endif /* RTOS_RTOS_H */
