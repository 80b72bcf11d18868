/*
 * The arm64 Linux Image header (Linux's Documentation/arch/arm64/booting.rst), which lets QEMU -kernel,
 * U-Boot booti and the rtmux hypervisor load an image. Assembly only: ARM64_IMAGE_HEADER entry, first
 * thing in .text.head; _image_size comes from lib/arm64/image.ld.S.
 */
#ifndef ARM64_IMAGE_H
#define ARM64_IMAGE_H

/* Byte offset of the u64 image_size field in the header (read by the hypervisor for its bundle size). */
#define ARM64_IMAGE_SIZE_OFFSET 16

#ifdef __ASSEMBLER__
#include "board.h"

/* The macro is assembly, not C: */
/* clang-format off */
/* flags: little-endian, 4 KiB pages, placement anywhere 2 MiB aligned is not claimed. */
#define ARM64_IMAGE_FLAGS 0x2

.macro ARM64_IMAGE_HEADER entry
    b       \entry                      /* code0 */
    .long   0                           /* code1 */
    .quad   BOARD_TEXT_OFFSET           /* text_offset: loaded at RAM base + this */
    .quad   _image_size                 /* image_size, including BSS */
    .quad   ARM64_IMAGE_FLAGS
    .quad   0, 0, 0                     /* reserved */
    .ascii  "ARM\x64"                   /* magic */
    .long   0                           /* reserved (PE header offset) */
.endm
/* clang-format on */
#endif

#endif /* ARM64_IMAGE_H */
