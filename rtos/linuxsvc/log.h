/*
 * stdout and stderr copied to Linux's log (log.c): called by the C library's console streams
 * (rtos/libc/stdio.c) with each line the console gets.
 */
#ifndef RTOS_LINUXSVC_LOG_H
#define RTOS_LINUXSVC_LOG_H

#include <stddef.h>

/* Reads whether the DTB asks for the log; called once before main. */
void lsvc_log_init(void);
/* Copies n bytes to Linux's log (or holds them): never waits for Linux. */
void lsvc_log_write(const void *buf, size_t n);
/* Tries to send what is held (fsync of 1 or 2). */
void lsvc_log_flush(void);

#endif /* RTOS_LINUXSVC_LOG_H */
