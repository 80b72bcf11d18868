# rtmux top-level build. The two commands a newcomer needs are `make run` and `make test`;
# both install their own dependencies first (tools/deps.sh, idempotent).

CROSS    ?= aarch64-linux-gnu-
CC       := $(CROSS)gcc
LD       := $(CROSS)ld
OBJCOPY  := $(CROSS)objcopy
HOSTCC   ?= gcc
PYTHON   := .venv/bin/python
BUILD    := build
Q        ?= @ # `make Q=` shows full command lines

# Warnings are the project's full set (see README "C rules"); all are errors.
WARN := -Wall -Wextra -Werror -Wshadow -Wmissing-prototypes -Wstrict-prototypes -Wconversion \
        -Wsign-conversion -Wundef -Wcast-align -Wno-unused-parameter

# Target code: C11, freestanding, no FP/SIMD in the kernels (rtos threads' FP registers are switched by
# arch_switch; an interrupt handler's first FP/SIMD use traps and saves them: rtos/irq.h). rtos
# applications may use FP, in threads and interrupt handlers.
TFLAGS  := -std=c11 -ffreestanding -fno-common -fno-stack-protector -fno-pic -mcpu=cortex-a72 \
           -mstrict-align -mno-outline-atomics -O2 -g -fno-tree-loop-distribute-patterns $(WARN)
# Applied to everything but rtos/apps/ (see above).
KFLAGS  := -mgeneral-regs-only
BOARD   := qemu-virt
LIBGCC   = $$($(CC) -print-libgcc-file-name)

# The board: platform/$(BOARD)/board.toml is its description (`./rtmux board import`), from which
# tools/rtmux/boarddesc.py generates board_desc.h into BOARD_GEN: the BOARD_* defines of what the device
# tree says (RAM base, the GIC's frames and maintenance PPI, the timer's PPIs, the console UART and its
# driver), or an error naming the field the images cannot be built without. platform/$(BOARD)/board.h
# includes it and adds what no device tree says; every includer gets both folders (BOARD_INC).
# BOARD_GIC_ALSO_<board>: the descriptions of the same board made with another GIC version, whose frames
# the one build carries too (the images pick their GIC driver at run time).
BOARD_GIC_ALSO_qemu-virt := qemu-virt-gicv2
BOARD_TOMLS := $(foreach b,$(BOARD) $(BOARD_GIC_ALSO_$(BOARD)),platform/$(b)/board.toml)
BOARD_GEN   := $(BUILD)/gen/$(BOARD)
BOARD_DESC  := $(BOARD_GEN)/board_desc.h
BOARD_INC   := -Iplatform/$(BOARD) -I$(BOARD_GEN)
# The generator runs on the project's Python (`make deps`), or on the host's python3 (3.11 or later)
# before there is one; looked up when the header is made (`=`), so that on a fresh machine `make test`
# finds the Python its own `deps` step installed.
BOARD_PYTHON = $(or $(wildcard $(PYTHON)),$(shell command -v python3 2>/dev/null))

$(BOARD_DESC): $(BOARD_TOMLS) tools/rtmux/boarddesc.py
	@mkdir -p $(dir $@)
	@echo "  GEN     $@"
	@if [ -z "$(BOARD_PYTHON)" ]; then \
	    echo "$@: generated from $(BOARD_TOMLS) by Python, and there is none ($(PYTHON) or python3):" \
	        "run \`make deps\`" >&2; exit 1; fi
	$(Q)PYTHONPATH=tools $(BOARD_PYTHON) -m rtmux.boarddesc header $(BOARD_TOMLS) -o $@

# The console UART's driver, named by the board's description (its [console] type, read here with awk:
# the Makefile is read before `make deps` can have installed Python): of the UART drivers below,
# hyp/drivers/NAME.c and rtos/drivers/NAME.c are compiled and the others not, since each implements the
# same interface (drivers/uart.h). The generated header's BOARD_UART_DRIVER names the same driver
# (boarddesc.UART_DRIVERS; test_board_header.py checks that they agree).
UART_DRIVERS := pl011 imx_uart
UART_DRIVER_pl011 := pl011
UART_DRIVER_imx   := imx_uart
UART_TYPE  := $(shell awk '/^\[/ { t = $$0 } t == "[console]" && $$1 == "type" { gsub(/"/, "", $$3); print $$3 }' \
                platform/$(BOARD)/board.toml 2>/dev/null)
BOARD_UART := $(UART_DRIVER_$(UART_TYPE))
ifneq ($(filter-out clean deps format format-check,$(or $(MAKECMDGOALS),all)),)
ifneq ($(words $(filter $(UART_DRIVERS),$(BOARD_UART))),1)
$(error platform/$(BOARD)/board.toml: [console] type "$(UART_TYPE)" has no driver (types: pl011, imx))
endif
endif
UART_OTHERS  := $(addsuffix .c,$(filter-out $(BOARD_UART),$(UART_DRIVERS)))

.PHONY: all rtos hyp guests linux-programs sdk posix-tests linuxsvc-tests linuxsvc-bench posix-bench posix-conformance deps run test unit lint cycles \
        format format-check pytest-unit \
        pytest-system bench bench-full clean
all: rtos hyp linux-programs

# ---------------------------------------------------------------- dependencies
deps:
	@tools/deps.sh

# ---------------------------------------------------------------- one template for both images
# $(call image_rules,PREFIX,BUILD-DIR,INCLUDES,EXTRA-CFLAGS,ASM-OFFSETS-SOURCE,LINKER-SCRIPT-SOURCE)
# defines, for an image built under BUILD-DIR: PREFIX_CFLAGS/ASFLAGS, the generated asm-offsets.h
# (offsets assembly uses, computed from the C structs), the preprocessed linker script
# BUILD-DIR/image.ld (board addresses from platform/BOARD/board.h and the generated board_desc.h), and
# object rules (.c, .S).
define image_rules
$(1)_INC     := $(3) $(BOARD_INC) -Ilib/include -I$(2)/gen
$(1)_CFLAGS  := $(TFLAGS) $(4) $$($(1)_INC)
$(1)_ASFLAGS := -g $$($(1)_INC)
$(1)_OFFSETS := $(2)/gen/asm-offsets.h
$(1)_LDS     := $(2)/image.ld

$$($(1)_OFFSETS): $(5) | $(BOARD_DESC)
	@mkdir -p $$(dir $$@)
	@echo "  GEN     $$@"
	$$(Q)$$(CC) $$($(1)_CFLAGS) -MMD -MP -MF $(2)/gen/asm-offsets.d -MT $$@ -S -o $(2)/gen/asm-offsets.s $$<
	@{ echo "/* Generated from $(5); do not edit. */"; \
	   echo "#ifndef $(1)_GEN_ASM_OFFSETS_H"; echo "#define $(1)_GEN_ASM_OFFSETS_H"; \
	   sed -n 's/.*->\([A-Z_0-9]*\) #\{0,1\}\([0-9-]*\).*/#define \1 \2/p' $(2)/gen/asm-offsets.s; \
	   echo "#endif"; } > $$@.tmp && mv $$@.tmp $$@

$$($(1)_LDS): $(6) platform/$(BOARD)/board.h $(BOARD_DESC)
	@mkdir -p $$(dir $$@)
	@echo "  LDS     $$@"
	$$(Q)$$(CC) -E -P -x c $(BOARD_INC) -o $$@ $$<

$(2)/%.o: %.c $$($(1)_OFFSETS) | $(BOARD_DESC)
	@mkdir -p $$(dir $$@)
	@echo "  CC      $$<"
	$$(Q)$$(CC) $$($(1)_CFLAGS) $$(if $$(findstring /apps/,$$<),,$$(KFLAGS)) -MMD -MP -c -o $$@ $$<

$(2)/%.o: %.S $$($(1)_OFFSETS) | $(BOARD_DESC)
	@mkdir -p $$(dir $$@)
	@echo "  AS      $$<"
	$$(Q)$$(CC) $$($(1)_ASFLAGS) -MMD -MP -c -o $$@ $$<
endef

# ---------------------------------------------------------------- rtos images
# The kernel library, then each application under rtos/apps/NAME/ linked with it into NAME.img. The
# selftest links a second build of the library with the kernel's assertions on (K_ASSERT). A layer's
# interface to the others is its include/ folder ("arch/X.h", "drivers/X.h"), so no file reaches into
# another folder by a relative path; the SDK ships rtos/include only.
B       := $(BUILD)/rtos
RTOS_INC := -Irtos/include -Irtos/arch/arm64/include -Irtos/drivers/include
$(eval $(call image_rules,RTOS,$(B),$(RTOS_INC),,rtos/arch/arm64/asm-offsets.c,lib/arm64/image.ld.S))
BA      := $(BUILD)/rtos-assert
$(eval $(call image_rules,RTOSA,$(BA),$(RTOS_INC),-DK_ASSERTS=1,rtos/arch/arm64/asm-offsets.c,lib/arm64/image.ld.S))

KSRC := $(filter-out $(addprefix rtos/drivers/,$(UART_OTHERS)),$(wildcard rtos/kernel/*.c rtos/lib/*.c \
          rtos/drivers/*.c lib/*.c)) $(filter-out rtos/arch/arm64/asm-offsets.c,$(wildcard rtos/arch/arm64/*.c))
ASRC := $(wildcard rtos/arch/arm64/*.S)
APPS := $(notdir $(wildcard rtos/apps/*))
ASSERT_APPS := selftest
# Applications linked with the C library as well (below, "the C library, POSIX and the SDK"): their
# main() runs in a thread of its own, and they reach Linux's files (the demo: its profile and telemetry).
LIBC_APPS := demo
LIBC_APP_HEAP := 262144
IMGS := $(foreach a,$(APPS),$(B)/$(a).img)

rtos: $(IMGS)

$(B)/librtos.a: $(patsubst %.c,$(B)/%.o,$(KSRC)) $(patsubst %.S,$(B)/%.o,$(ASRC))
$(BA)/librtos.a: $(patsubst %.c,$(BA)/%.o,$(KSRC)) $(patsubst %.S,$(BA)/%.o,$(ASRC))
$(B)/librtos.a $(BA)/librtos.a:
	@rm -f $@
	@echo "  AR      $@"
	$(Q)$(CROSS)ar rcs $@ $^

# NAME.elf: the application's objects, the kernel library (the assertion build for ASSERT_APPS).
define rtos_app
$(B)/$(1).elf: $(patsubst %.c,$(B)/%.o,$(wildcard rtos/apps/$(1)/*.c)) \
    $(if $(filter $(1),$(ASSERT_APPS)),$(BA),$(B))/librtos.a $(RTOS_LDS)
endef
$(foreach a,$(filter-out $(LIBC_APPS),$(APPS)),$(eval $(call rtos_app,$(a))))
$(B)/%.elf:
	@echo "  LD      $@"
	$(Q)$(LD) -nostdlib -T $(RTOS_LDS) -Map $(B)/$*.map -o $@ \
	    $(filter %.o,$^) --whole-archive $(filter %.a,$^) --no-whole-archive $(LIBGCC) --no-warn-rwx-segments

# A LIBC_APPS application: its objects compiled as the kernel's applications are, with picolibc's headers
# and the POSIX layer's (thread-local data local-exec: one image), linked as the SDK links one
# (rtos/sdk/rtos.mk): the kernel library whole, then librtos-posix.a, picolibc and libgcc.
LIBC_APP_CFLAGS = $(TFLAGS) -D_POSIX_C_SOURCE=200809L -ftls-model=local-exec $(POSIX_INC)
define libc_app
$(patsubst %.c,$(B)/%.o,$(wildcard rtos/apps/$(1)/*.c)): $(B)/%.o: %.c
	@mkdir -p $$(dir $$@)
	@echo "  CC      $$<"
	$$(Q)$$(CC) $$(LIBC_APP_CFLAGS) -MMD -MP -c -o $$@ $$<

$(B)/$(1).elf: $(patsubst %.c,$(B)/%.o,$(wildcard rtos/apps/$(1)/*.c)) $(B)/librtos.a $(P)/librtos-posix.a \
    $(RTOS_LDS)
	@echo "  LD      $$@"
	$$(Q)$$(LD) -nostdlib --defsym=__rtos_heap_size=$(LIBC_APP_HEAP) -T $(RTOS_LDS) -Map $(B)/$(1).map -o $$@ \
	    $$(filter %.o,$$^) --whole-archive $(B)/librtos.a --no-whole-archive --start-group $(P)/librtos-posix.a \
	    $(PICOLIBC)/lib/libc.a $(PICOLIBC)/lib/libm.a $$(LIBGCC) --end-group --no-warn-rwx-segments
endef

# ---------------------------------------------------------------- the C library, POSIX and the SDK
# Applications written against POSIX link the kernel library with picolibc (Debian's
# picolibc-aarch64-linux-gnu, `make deps`), rtos/libc/ (picolibc's platform: console streams, locks,
# start-up) and rtos/posix/ (pthreads, semaphores, clocks, timers, message queues): librtos-posix.a.
# `make sdk` puts them, the public headers, the linker script and the build files (rtos/sdk/) into
# build/sdk/, which builds applications anywhere (docs/posix.md). The POSIX tests (tests/posix/NAME.c)
# are such applications: build/posix/NAME.img.
PICOLIBC   ?= /usr/lib/picolibc/aarch64-linux-gnu
GCC_INC     = $(shell $(CC) -print-file-name=include)
P          := $(BUILD)/rtos-posix
PSRC       := $(wildcard rtos/libc/*.c rtos/posix/*.c rtos/linuxsvc/*.c)
POSIX_INC   = -nostdinc -isystem rtos/posix/include -isystem $(PICOLIBC)/include -isystem $(GCC_INC) \
              -Irtos/include -Irtos/arch/arm64/include -Irtos -Ilib/include
# __RTMUX_POSIX_IMPL: the library's own build, without <pthread.h>'s inlined mutex path.
POSIX_FLAGS = -std=c11 -D_POSIX_C_SOURCE=200809L -D__RTMUX_POSIX_IMPL -fno-common -fno-stack-protector \
              -fno-pic -mcpu=cortex-a72 -O2 -g -ftls-model=local-exec -ffunction-sections -fdata-sections \
              $(KFLAGS) $(WARN)

$(P)/%.o: %.c
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(POSIX_FLAGS) $(POSIX_INC) -MD -MP -c -o $@ $<

$(P)/librtos-posix.a: $(patsubst %.c,$(P)/%.o,$(PSRC))
	@rm -f $@
	@echo "  AR      $@"
	$(Q)$(CROSS)ar rcs $@ $^

$(foreach a,$(LIBC_APPS),$(eval $(call libc_app,$(a))))

SDK := $(BUILD)/sdk
SDK_HEADERS := $(wildcard rtos/include/rtos/*.h) rtos/arch/arm64/include/arch/context.h \
               $(shell find rtos/posix/include -name '*.h')
sdk: $(SDK)/VERSION

$(SDK)/VERSION: $(B)/librtos.a $(P)/librtos-posix.a $(RTOS_LDS) $(SDK_HEADERS) $(shell find rtos/sdk -type f)
	@echo "  SDK     $(SDK)"
	$(Q)rm -rf $(SDK) && mkdir -p $(SDK)/lib $(SDK)/include/rtos $(SDK)/include/arch
	$(Q)cp $(B)/librtos.a $(P)/librtos-posix.a $(SDK)/lib/ && cp $(RTOS_LDS) $(SDK)/lib/rtos.ld
	$(Q)cp $(wildcard rtos/include/rtos/*.h) $(SDK)/include/rtos/
	$(Q)cp rtos/arch/arm64/include/arch/context.h $(SDK)/include/arch/
	$(Q)cp -r rtos/posix/include/. $(SDK)/include/
	$(Q)cp -r rtos/sdk/. $(SDK)/
	$(Q)echo "rtos $$(sed -n 's/#define RT_VERSION "\(.*\)"/\1/p' rtos/include/rtos/system.h)" > $@.tmp && mv $@.tmp $@

# The POSIX tests, built with the SDK's own rules (rtos/sdk/rtos.mk), one application per file.
PT      := $(BUILD)/posix
PTESTS  := $(basename $(notdir $(wildcard tests/posix/*.c)))
posix-tests: $(foreach t,$(PTESTS),$(PT)/$(t).img)

$(PT)/%.img: tests/posix/%.c $(wildcard tests/posix/*.h) $(SDK)/VERSION
	@mkdir -p $(PT)/$*
	@echo "  APP     $@"
	$(Q)$(MAKE) -s --no-print-directory -f $(SDK)/rtos.mk RTOS_SDK=$(SDK) APP=$* SRCS=$< \
	    OUT=$(PT)/$* EXTRA_CFLAGS="$(WARN) -Wno-sign-conversion" && cp $(PT)/$*/$*.img $@ && cp $(PT)/$*/$*.elf $(PT)/$*.elf

# Applications that use Linux's services (tests/linuxsvc/NAME.c, with the POSIX tests' checks): the
# whole system boots each (tests/system/test_linux_services.py).
LT      := $(BUILD)/linuxsvc
LTESTS  := $(basename $(notdir $(wildcard tests/linuxsvc/*.c)))
linuxsvc-tests: $(foreach t,$(LTESTS),$(LT)/$(t).img)

$(LT)/%.img: tests/linuxsvc/%.c $(wildcard tests/posix/*.h) $(SDK)/VERSION
	@mkdir -p $(LT)/$*
	@echo "  APP     $@"
	$(Q)$(MAKE) -s --no-print-directory -f $(SDK)/rtos.mk RTOS_SDK=$(SDK) APP=$* SRCS=$< HEAP_SIZE=4194304 \
	    OUT=$(LT)/$* EXTRA_CFLAGS="$(WARN) -Wno-sign-conversion -Itests/posix" && cp $(LT)/$*/$*.img $@

# The POSIX layer's cost over the native API (rtos/posix/bench/cost.c; `./rtmux bench` runs it).
posix-bench: $(PT)/cost.img

$(PT)/cost.img: rtos/posix/bench/cost.c $(SDK)/VERSION
	@mkdir -p $(PT)/cost
	@echo "  APP     $@"
	$(Q)$(MAKE) -s --no-print-directory -f $(SDK)/rtos.mk RTOS_SDK=$(SDK) APP=cost SRCS=$< \
	    OUT=$(PT)/cost EXTRA_CFLAGS="$(WARN)" && cp $(PT)/cost/cost.img $@ && cp $(PT)/cost/cost.elf $(PT)/cost.elf

# Linux's files from the rtos, measured (rtos/linuxsvc/bench/remote.c; `./rtmux bench` runs it):
# remote.img with the program's own sample counts, remote-N.img with N samples of each measurement
# (`./rtmux bench` builds what it needs: 10000, or LSB_QUICK with --quick, which `make test` runs).
LSB_QUICK := 1000
linuxsvc-bench: $(LT)/remote.img $(LT)/remote-$(LSB_QUICK).img

$(LT)/remote.img: rtos/linuxsvc/bench/remote.c $(SDK)/VERSION
	@mkdir -p $(LT)/remote
	@echo "  APP     $@"
	$(Q)$(MAKE) -s --no-print-directory -f $(SDK)/rtos.mk RTOS_SDK=$(SDK) APP=remote SRCS=$< \
	    OUT=$(LT)/remote EXTRA_CFLAGS="$(WARN)" && cp $(LT)/remote/remote.img $@

$(LT)/remote-%.img: rtos/linuxsvc/bench/remote.c $(SDK)/VERSION
	@mkdir -p $(LT)/remote-$*
	@echo "  APP     $@"
	$(Q)$(MAKE) -s --no-print-directory -f $(SDK)/rtos.mk RTOS_SDK=$(SDK) APP=remote SRCS=$< \
	    OUT=$(LT)/remote-$* EXTRA_CFLAGS="$(WARN) -DLSB_SAMPLES=$* -DLSB_PERIODS=$*" \
	    && cp $(LT)/remote-$*/remote.img $@

-include $(shell find $(P) -name '*.d' 2>/dev/null)

# The POSIX layer against the Open POSIX Test Suite (docs/posix.md, "Conformance"): SUITE is the suite's
# root, extracted by the user (it is not part of rtmux, nor of `make test`). Builds each test of the
# interfaces the rtos implements with the SDK, boots each bare in icount, one at a time, and writes
# build/posix-conformance/report.{csv,md}. POSIX_TESTS narrows it: sem_* or sem_open/1-1 (patterns).
POSIX_TESTS ?=
posix-conformance: deps sdk
	@if [ -z "$(SUITE)" ]; then echo "posix-conformance: set SUITE=DIR, the Open POSIX Test Suite's root (docs/posix.md, \"Conformance\")" >&2; exit 2; fi
	@if [ ! -d "$(SUITE)" ]; then echo "posix-conformance: SUITE=$(SUITE): no such folder (docs/posix.md, \"Conformance\")" >&2; exit 2; fi
	PYTHONPATH=tools $(PYTHON) -m posixsuite --suite "$(SUITE)" --sdk $(SDK) --out $(BUILD)/posix-conformance $(POSIX_TESTS)

# ---------------------------------------------------------------- hypervisor
# build/hyp/rtmux.img is the hypervisor alone; ./rtmux appends the configuration blob and the partitions'
# images to make a bootable system image (tools/rtmux).
H    := $(BUILD)/hyp
$(eval $(call image_rules,HYP,$(H),-Ihyp/include -Ihyp/arch/arm64/include -Ihyp,,hyp/arch/arm64/asm-offsets.c,lib/arm64/image.ld.S))
HSRC := $(filter-out $(addprefix hyp/drivers/,$(UART_OTHERS)),$(wildcard hyp/core/*.c hyp/drivers/*.c lib/*.c)) \
        $(filter-out hyp/arch/arm64/asm-offsets.c,$(wildcard hyp/arch/arm64/*.c))
HOBJ := $(patsubst %.c,$(H)/%.o,$(HSRC)) $(patsubst %.S,$(H)/%.o,$(wildcard hyp/arch/arm64/*.S))

hyp: $(H)/rtmux.img

$(H)/rtmux.elf: $(HOBJ) $(HYP_LDS)
	@echo "  LD      $@"
	$(Q)$(LD) -nostdlib -T $(HYP_LDS) -Map $(H)/rtmux.map -o $@ $(HOBJ) $(LIBGCC) --no-warn-rwx-segments

%.img: %.elf
	@echo "  IMAGE   $@"
	$(Q)$(OBJCOPY) -O binary $< $@

# Objects are never intermediate files to be deleted after a link.
.SECONDARY:

-include $(shell find $(B) $(BA) $(H) -name '*.d' 2>/dev/null)

# ---------------------------------------------------------------- test guests
# Bare-metal arm64 kernels that tests boot as a partition in place of Linux (tests/guests/NAME/, with
# tests/guests/common/ linked into each). Position independent, so any partition can load them: they
# keep no absolute addresses (see common/start.S); linked at the board's address like the rtos.
G      := $(BUILD)/guests
GUESTS := $(filter-out common,$(notdir $(wildcard tests/guests/*)))
GUEST_CFLAGS := $(TFLAGS) -Itests/guests/common $(BOARD_INC) -Ilib/include
GCOMMON := $(patsubst %.c,$(G)/%.o,$(wildcard tests/guests/common/*.c)) \
           $(patsubst %.S,$(G)/%.o,$(wildcard tests/guests/common/*.S))

guests: $(foreach g,$(GUESTS),$(G)/$(g).img)

$(G)/tests/%.o: tests/%.c | $(BOARD_DESC)
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(GUEST_CFLAGS) -MMD -MP -c -o $@ $<

$(G)/tests/%.o: tests/%.S | $(BOARD_DESC)
	@mkdir -p $(dir $@)
	@echo "  AS      $<"
	$(Q)$(CC) -g -Itests/guests/common $(BOARD_INC) -Ilib/include -MMD -MP -c -o $@ $<

$(G)/image.ld: lib/arm64/image.ld.S platform/$(BOARD)/board.h $(BOARD_DESC)
	@mkdir -p $(dir $@)
	$(Q)$(CC) -E -P -x c $(BOARD_INC) -o $@ $<

define guest_image
$(G)/$(1).elf: $(patsubst %.c,$(G)/%.o,$(wildcard tests/guests/$(1)/*.c)) $(GCOMMON) $(G)/image.ld
	@echo "  LD      $$@"
	$$(Q)$$(LD) -nostdlib -T $(G)/image.ld -o $$@ $$(filter %.o,$$^) $$(LIBGCC) --no-warn-rwx-segments
endef
$(foreach g,$(GUESTS),$(eval $(call guest_image,$(g))))

-include $(shell find $(G) -name '*.d' 2>/dev/null)

# ---------------------------------------------------------------- Linux programs
# rtmux's programs for the Linux partition (guest/NAME/*.c, one folder each; tools/rtmux/paths.py reads
# the same list): static arm64 executables, build/guest/NAME, which the initramfs puts in /usr/bin, and
# the same sources built for the host, build/guest/host/NAME, for their unit tests. User space: the C
# library, no freestanding flags; lib/include for what they share with the rtos (lib/netproto.h).
LP      := $(BUILD)/guest
LPROGS  := $(notdir $(patsubst %/,%,$(dir $(wildcard guest/*/*.c))))
LPFLAGS := -std=c11 -O2 $(WARN) -Ilib/include

# Examples whose Linux build goes into the initramfs too (tools/rtmux/paths.py: LINUX_EXAMPLES): each
# examples/NAME/Makefile's `linux` target, a static arm64 executable, copied to build/guest/NAME.
LEXAMPLES := control-loop

linux-programs: $(foreach p,$(sort $(LPROGS)),$(LP)/$(p) $(LP)/host/$(p)) $(addprefix $(LP)/,$(LEXAMPLES))

define linux_example
$(LP)/$(1): $(wildcard examples/$(1)/*.c examples/$(1)/*.h) examples/$(1)/Makefile
	@echo "  EXAMPLE $$@"
	$$(Q)$$(MAKE) -s --no-print-directory -C examples/$(1) linux OUT=$(abspath $(LP)/examples/$(1)) \
	    CROSS=$(CROSS) CFLAGS="-std=c11 -O2"
	$$(Q)$$(CROSS)strip -o $$@ $(LP)/examples/$(1)/linux/$(1)
endef
$(foreach e,$(LEXAMPLES),$(eval $(call linux_example,$(e))))

define linux_program
$(LP)/$(1): $(wildcard guest/$(1)/*.c guest/$(1)/*.h lib/include/lib/*.h)
	@mkdir -p $$(dir $$@)
	@echo "  CC      $$@"
	$$(Q)$$(CC) $$(LPFLAGS) -static -s -o $$@ $$(filter %.c,$$^)

$(LP)/host/$(1): $(wildcard guest/$(1)/*.c guest/$(1)/*.h lib/include/lib/*.h)
	@mkdir -p $$(dir $$@)
	@echo "  HOSTCC  $$@"
	$$(Q)$$(HOSTCC) $$(LPFLAGS) -o $$@ $$(filter %.c,$$^)
endef
$(foreach p,$(sort $(LPROGS)),$(eval $(call linux_program,$(p))))

# ---------------------------------------------------------------- run / test / bench
run: deps rtos hyp
	./rtmux run

unit: deps
	@$(MAKE) -s -C tests/unit/c HOSTCC=$(HOSTCC)

# The hypervisor's fuzzers at length (`make unit` runs each for a second), side by side on two cores:
# fuzz_hyp_mmio (GIC filter, UART) first sweeps every GIC access, 7 to 12 million of them with the 2 to 4
# CPUs its seed draws: a fixed 1.5 to 5 minutes (2026-11-26, two cores busy with QEMU besides), then
# makes random ones for FUZZ_SECONDS; fuzz_hyp_vbus (the V-Bus device) runs FUZZ_SECONDS meanwhile. So
# `make fuzz` takes the sweep + FUZZ_SECONDS (+ the build once); FUZZ_SWEEP=0 leaves the sweep out.
FUZZ_SECONDS ?= 300
FUZZ_SWEEP ?= 1
fuzz: deps
	@$(MAKE) -s -j2 -C tests/unit/c fuzz HOSTCC=$(HOSTCC) FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_SWEEP=$(FUZZ_SWEEP)

C_FILES = $(shell git ls-files -co --exclude-standard '*.c' '*.h')
format:
	clang-format -i $(C_FILES)

format-check:
	@clang-format --dry-run --Werror $(C_FILES) && echo "clang-format: clean"

# No two source files of one image may depend on each other in a cycle (symbol references between
# their objects; tools/devcheck/cycles.py). Each rtos application is checked with the library it links.
RTOS_LIB_DIRS = rtos/kernel rtos/lib rtos/drivers rtos/arch lib
cycles: deps rtos hyp $(P)/librtos-posix.a
	@PYTHONPATH=tools $(PYTHON) -m devcheck.cycles --name hypervisor --root $(H) $(H)
	@PYTHONPATH=tools $(PYTHON) -m devcheck.cycles --name "rtos C library and POSIX" --root $(P) \
	    $(P)/rtos/libc $(P)/rtos/posix $(P)/rtos/linuxsvc
	@set -e; for a in $(APPS); do \
	    case " $(ASSERT_APPS) " in *" $$a "*) lib=$(BA);; *) lib=$(B);; esac; \
	    PYTHONPATH=tools $(PYTHON) -m devcheck.cycles --name "rtos $$a" --root $$lib --root $(B) \
	        $(addprefix $$lib/,$(RTOS_LIB_DIRS)) $(B)/rtos/apps/$$a; \
	done

lint: deps format-check cycles
	.venv/bin/ruff check tools tests rtmux
	.venv/bin/ruff format --check tools tests rtmux
	.venv/bin/mypy
	PYTHONPATH=tools .venv/bin/lint-imports --no-cache

pytest-unit: deps
	$(PYTHON) -m pytest -q tests/unit/python

pytest-system: deps rtos
	$(PYTHON) -m pytest -q -m system tests/system

# One pytest session at the end gives CI its recognisable summary line. The system tests are QEMU runs of
# one host thread each, so TEST_JOBS pytest workers (default: one per core, at most 4) share them out
# file by file (a file's tests share module fixtures and run in order on one worker).
TEST_JOBS ?= $(shell n=$$(nproc 2>/dev/null || echo 1); [ $$n -gt 4 ] && n=4; echo $$n)
test: deps lint unit rtos hyp guests sdk posix-tests linuxsvc-tests posix-bench linuxsvc-bench
	$(PYTHON) -m pytest -n $(TEST_JOBS) --dist loadfile tests/unit/python tests/system

bench: deps rtos hyp
	./rtmux bench

# The benchmark, then Linux's loaded tail over ten boots of each case (`./rtmux bench linux-tail`).
bench-full: deps rtos hyp
	./rtmux bench --full

clean:
	rm -rf $(BUILD)
	@$(MAKE) -s -C tests/unit/c clean
