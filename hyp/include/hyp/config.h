/*
 * System configuration: which partitions exist and what they own.
 */
#ifndef HYP_CONFIG_H
#define HYP_CONFIG_H

#include "hyp/hyp.h"

/* Fills parts[] (at most max) and returns the number of partitions; panics on an invalid configuration. */
unsigned config_load(struct partition *parts, unsigned max);

#endif /* HYP_CONFIG_H */
