/*
 * Demo placeholder (replaced below).
 */
#include "rtos/rtos.h"

void rt_main(void)
{
    rt_printf("demo\n");
    rt_system_off();
}
