/*
 * Bit helpers for the register definitions in this folder, usable from C and assembly.
 */
#ifndef ARM64_BITS_H
#define ARM64_BITS_H

#ifdef __ASSEMBLER__
#define UL(x) x
#define U(x)  x
#else
#define UL(x) x##ul
#define U(x)  x##u
#endif

#define BIT(n)   (UL(1) << (n)) /* 64-bit registers */
#define BIT32(n) (U(1) << (n))  /* 32-bit (memory-mapped) registers */

#endif /* ARM64_BITS_H */
