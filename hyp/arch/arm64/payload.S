/*
 * Images bundled into the hypervisor image. PAYLOAD_RTOS is the rtos image's path (set by the Makefile).
 */
    .section .rodata.payload, "a"
    .balign 4096
    .globl payload_rtos, payload_rtos_end
payload_rtos:
    .incbin PAYLOAD_RTOS
payload_rtos_end:
