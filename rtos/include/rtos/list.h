/*
 * Intrusive circular doubly-linked list. A detached node points to itself, so removing a node twice
 * is harmless and rt_list_linked() tells whether a node is on some list.
 */
#ifndef RTOS_LIST_H
#define RTOS_LIST_H

#include <stdbool.h>
#include <stddef.h>

typedef struct rt_list {
    struct rt_list *next;
    struct rt_list *prev;
} rt_list_t;

#define RT_CONTAINER_OF(ptr, type, member) ((type *)(void *)((char *)(ptr)-offsetof(type, member)))

static inline void rt_list_init(rt_list_t *l)
{
    l->next = l;
    l->prev = l;
}

static inline bool rt_list_empty(const rt_list_t *l)
{
    return l->next == l;
}

static inline bool rt_list_linked(const rt_list_t *n)
{
    return n->next != n;
}

/* Inserts n just before pos; with pos = list head this appends. */
static inline void rt_list_insert_before(rt_list_t *pos, rt_list_t *n)
{
    n->prev = pos->prev;
    n->next = pos;
    pos->prev->next = n;
    pos->prev = n;
}

static inline void rt_list_append(rt_list_t *head, rt_list_t *n)
{
    rt_list_insert_before(head, n);
}

static inline void rt_list_prepend(rt_list_t *head, rt_list_t *n)
{
    rt_list_insert_before(head->next, n);
}

static inline void rt_list_remove(rt_list_t *n)
{
    n->prev->next = n->next;
    n->next->prev = n->prev;
    n->next = n;
    n->prev = n;
}

#endif /* RTOS_LIST_H */
