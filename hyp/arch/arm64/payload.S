/*
 * Images bundled into the hypervisor image, by path (set by the Makefile): PAYLOAD_RTOS always, its DTB
 * (boot arguments) optionally, and PAYLOAD_LINUX_KERNEL/INITRD/DTB when the system has a Linux partition.
 */
    .section .rodata.payload, "a"
    .balign 4096
    .globl payload_rtos, payload_rtos_end
payload_rtos:
    .incbin PAYLOAD_RTOS
payload_rtos_end:

#ifdef PAYLOAD_RTOS_DTB
    .balign 4096
    .globl payload_rtos_dtb, payload_rtos_dtb_end
payload_rtos_dtb:
    .incbin PAYLOAD_RTOS_DTB
payload_rtos_dtb_end:
#endif

#ifdef PAYLOAD_LINUX_KERNEL
    .balign 4096
    .globl payload_linux_kernel, payload_linux_kernel_end
payload_linux_kernel:
    .incbin PAYLOAD_LINUX_KERNEL
payload_linux_kernel_end:
    .balign 4096
    .globl payload_linux_initrd, payload_linux_initrd_end
payload_linux_initrd:
    .incbin PAYLOAD_LINUX_INITRD
payload_linux_initrd_end:
    .balign 4096
    .globl payload_linux_dtb, payload_linux_dtb_end
payload_linux_dtb:
    .incbin PAYLOAD_LINUX_DTB
payload_linux_dtb_end:
#endif
