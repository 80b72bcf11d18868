/*
 * Host stand-ins for the rtos calls that rtos/linuxsvc/ (Linux's services) uses: mutexes, semaphores,
 * time, the DTB's /rtmux-services node and V-Bus channels, each here a socket to a server process or
 * thread (a real diod or rtmux-netd, or a hostile one). Threads are pthreads.
 */
#ifndef SVC_HOST_H
#define SVC_HOST_H

#include <stdbool.h>
#include <stdint.h>

/* The socket the channel `name` reads and writes (the other end is its Linux side); -1: not connected.
 * A channel never given a socket or a hook does not exist (RT_ENOENT). */
void svc_host_set_chan_fd(const char *name, int fd);
/* Called when the rtos side closes its end of `name` (after a broken frame): the test gives a new
 * socket (or -1) through svc_host_set_chan_fd, as Linux's supervisor would restart its server. */
void svc_host_on_chan_close(const char *name, void (*fn)(void));
/* Bytes the rtos side sent on `name` so far. */
uint64_t svc_host_chan_sent(const char *name);

/* The same for the channel `rtmux-files`. */
void svc_host_set_fd(int fd);
void svc_host_on_close(void (*fn)(void));
/* The exports the DTB would list ("rtmux,files"), NUL-separated, and their read-only cells. */
void svc_host_set_exports(const char *const *paths, const bool *ro, unsigned n);
/* Bytes the rtos side sent so far (the hostile server compares). */
uint64_t svc_host_sent(void);

#endif /* SVC_HOST_H */
