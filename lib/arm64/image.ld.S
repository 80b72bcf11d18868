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
    .data : ALIGN(16) {
        *(.data .data.*)
    }
    .bss (NOLOAD) : ALIGN(16) {
        _bss_start = .;
        *(.bss .bss.* COMMON)
        . = ALIGN(16);
        _bss_end = .;
    }
    .pgtables (NOLOAD) : ALIGN(4096) {
        *(.pgtables)
    }
    . = ALIGN(4096);
    _end = .;
    _image_size = _end - _start;
    /DISCARD/ : { *(.comment) *(.note*) *(.eh_frame*) }
}
