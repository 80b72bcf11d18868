# CMake toolchain file of the rtos SDK (docs/posix.md). In an application's CMakeLists.txt:
#     add_executable(hello main.c)
#     rtos_image(hello)              # also writes hello.img next to the ELF
# and configure with: cmake -DCMAKE_TOOLCHAIN_FILE=<sdk>/toolchain.cmake -B build
# RTOS_HEAP_SIZE (bytes) sets the C library's heap; main()'s stack comes from it.

set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
get_filename_component(RTOS_SDK "${CMAKE_CURRENT_LIST_DIR}" ABSOLUTE)
set(RTOS_CROSS "aarch64-linux-gnu-" CACHE STRING "prefix of the cross tools")
set(PICOLIBC "/usr/lib/picolibc/aarch64-linux-gnu" CACHE PATH "picolibc for aarch64 (Debian's picolibc-aarch64-linux-gnu)")
set(RTOS_HEAP_SIZE 1048576 CACHE STRING "bytes of the C library's malloc heap")
if(NOT EXISTS "${PICOLIBC}/lib/libc.a")
  message(FATAL_ERROR "picolibc not found in ${PICOLIBC}: install Debian's picolibc-aarch64-linux-gnu (or set PICOLIBC)")
endif()

set(CMAKE_C_COMPILER "${RTOS_CROSS}gcc")
set(CMAKE_OBJCOPY "${RTOS_CROSS}objcopy")
# No program can run during configuration: test the compiler with a library.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

execute_process(COMMAND "${CMAKE_C_COMPILER}" -print-file-name=include
                OUTPUT_VARIABLE RTOS_GCC_INCLUDE OUTPUT_STRIP_TRAILING_WHITESPACE)
execute_process(COMMAND "${CMAKE_C_COMPILER}" -print-libgcc-file-name
                OUTPUT_VARIABLE RTOS_LIBGCC OUTPUT_STRIP_TRAILING_WHITESPACE)

# The same flags as rtos.mk: the rtos's CPU, local-exec thread-local data, the SDK's headers first.
set(CMAKE_C_FLAGS_INIT "-mcpu=cortex-a72 -fno-pic -ftls-model=local-exec -fno-stack-protector -nostdinc -isystem ${RTOS_SDK}/include -isystem ${PICOLIBC}/include -isystem ${RTOS_GCC_INCLUDE}")
set(CMAKE_EXE_LINKER_FLAGS_INIT "-nostdlib -static -no-pie -Wl,--defsym=__rtos_heap_size=${RTOS_HEAP_SIZE} -T ${RTOS_SDK}/lib/rtos.ld -Wl,--no-warn-rwx-segments")
# The kernel library whole (its boot code and vectors are reached by no symbol), then the POSIX layer,
# the C library and libgcc, which refer to each other.
set(CMAKE_C_STANDARD_LIBRARIES "-Wl,--whole-archive ${RTOS_SDK}/lib/librtos.a -Wl,--no-whole-archive -Wl,--start-group ${RTOS_SDK}/lib/librtos-posix.a ${PICOLIBC}/lib/libc.a ${PICOLIBC}/lib/libm.a ${RTOS_LIBGCC} -Wl,--end-group")

# TARGET.img, the image a system configuration's `image =` names, beside the ELF.
function(rtos_image target)
  add_custom_command(TARGET ${target} POST_BUILD
    COMMAND "${CMAKE_OBJCOPY}" -O binary "$<TARGET_FILE:${target}>" "$<TARGET_FILE_DIR:${target}>/${target}.img"
    COMMENT "rtos image ${target}.img")
endfunction()
