/*
 * Layout of both images (the rtos and the hypervisor): an arm64 Image, loaded (QEMU -kernel, U-Boot
 * booti, or the rtmux hypervisor for the rtos) at RAM base + text_offset = BOARD_LINK_ADDR (board.h).
 * The Image header (arm64/image.h, first in .text.head) advertises image_size = _end - _start, BSS
 * included, so a loader never places the DTB or an initrd over BSS. The hypervisor's configuration blob
 * is appended at _end, and everything up to the blob's end must stay below the lowest partition RAM
 * (the configuration places it; the hypervisor checks it at boot).
 */
#include "board.h"

OUTPUT_FORMAT("elf64-littleaarch64")
OUTPUT_ARCH(aarch64)
ENTRY(_start)

SECTIONS
{
    . = BOARD_LINK_ADDR;
    _start = .;
    .text : {
        KEEP(*(.text.head))
        *(.text.boot)
        *(.text .text.*)
        . = ALIGN(2048);
        KEEP(*(.text.vectors))
    }
    .rodata : ALIGN(16) {
        *(.rodata .rodata.*)
        . = ALIGN(16);
        _rodata_end = .;
    }
    /* Constructors of applications linked with the C library (the rtos's libc start-up runs them). */
    .init_array : ALIGN(8) {
        __preinit_array_start = .;
        KEEP(*(.preinit_array))
        __preinit_array_end = .;
        __init_array_start = .;
        KEEP(*(SORT_BY_INIT_PRIORITY(.init_array.*)))
        KEEP(*(.init_array))
        __init_array_end = .;
        __fini_array_start = .;
        KEEP(*(SORT_BY_INIT_PRIORITY(.fini_array.*)))
        KEEP(*(.fini_array))
        __fini_array_end = .;
    }
    .data : ALIGN(16) {
        *(.data .data.*)
    }
    /*
     * The template of every thread's thread-local storage (ELF TLS, AArch64 variant 1): never used in
     * place; each rtos thread gets a copy at the top of its stack (rtos/arch/arm64/cpu.c). .tbss takes
     * no room here. Both sections are empty in the kernels themselves.
     */
    .tdata : ALIGN(16) {
        *(.tdata .tdata.*)
    }
    .tbss : ALIGN(16) {
        *(.tbss .tbss.*)
    }
    __tls_base = ADDR(.tdata);
    __tdata_source = LOADADDR(.tdata);
    __tdata_size = SIZEOF(.tdata);
    __tbss_offset = ADDR(.tbss) - ADDR(.tdata);
    __tbss_size = SIZEOF(.tbss);
    __tls_size = __tbss_offset + __tbss_size;
    __tls_align = MAX(ALIGNOF(.tdata), ALIGNOF(.tbss));
    __arm64_tls_tcb_offset = MAX(16, __tls_align);
    .bss (NOLOAD) : ALIGN(16) {
        _bss_start = .;
        *(.bss .bss.* COMMON)
        . = ALIGN(16);
        _bss_end = .;
    }
    /* The C library's malloc heap (sbrk), __rtos_heap_size bytes: set by the rtos SDK's link (an
     * application's HEAP_SIZE), 0 for images without the C library. */
    .heap (NOLOAD) : ALIGN(16) {
        __heap_start = .;
        . += DEFINED(__rtos_heap_size) ? __rtos_heap_size : 0;
        . = ALIGN(16);
        __heap_end = .;
    }
    .pgtables (NOLOAD) : ALIGN(4096) {
        *(.pgtables)
    }
    . = ALIGN(4096);
    _end = .;
    _image_size = _end - _start;
    /DISCARD/ : { *(.comment) *(.note*) *(.eh_frame*) }
}
