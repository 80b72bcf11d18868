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
B        := $(BUILD)/rtos

# Warnings are the project's full set (see README "C rules"); all are errors.
WARN := -Wall -Wextra -Werror -Wshadow -Wmissing-prototypes -Wstrict-prototypes -Wconversion \
        -Wsign-conversion -Wundef -Wcast-align -Wno-unused-parameter

# Target code: C11, freestanding, no FP/SIMD in the kernel (so interrupts never need to save FP
# state; threads' FP registers are switched by arch_switch). Applications may use FP.
TCFLAGS := -std=c11 -ffreestanding -fno-common -fno-stack-protector -fno-pic -mcpu=cortex-a72 \
           -mstrict-align -mno-outline-atomics -O2 -g -fno-tree-loop-distribute-patterns $(WARN) \
           -Irtos/include -Irtos/arch/arm64/include -Irtos/platform/qemu-virt -Ilib/include -I$(B)/gen
KFLAGS  := $(TCFLAGS) -mgeneral-regs-only
AFLAGS  := -g -Irtos/include -Irtos/arch/arm64/include -Irtos/platform/qemu-virt -I$(B)/gen

KSRC := $(wildcard rtos/kernel/*.c rtos/lib/*.c rtos/drivers/*.c lib/*.c) \
        $(filter-out rtos/arch/arm64/asm-offsets.c,$(wildcard rtos/arch/arm64/*.c))
ASRC := $(wildcard rtos/arch/arm64/*.S)
KOBJ := $(patsubst %.c,$(B)/%.o,$(KSRC)) $(patsubst %.S,$(B)/%.o,$(ASRC))
APPS := demo selftest latency ctxsw
IMGS := $(foreach a,$(APPS),$(B)/$(a).img)
OFFSETS := $(B)/gen/asm-offsets.h


.PHONY: all rtos hyp deps run test unit lint format format-check pytest-unit pytest-system bench clean
all: rtos hyp

# ---------------------------------------------------------------- dependencies
deps:
	@tools/deps.sh

# ---------------------------------------------------------------- rtos images
rtos: $(IMGS)

$(OFFSETS): rtos/arch/arm64/asm-offsets.c $(wildcard rtos/include/rtos/*.h rtos/arch/arm64/include/arch/*.h)
	@mkdir -p $(dir $@)
	@echo "  GEN     $@"
	$(Q)$(CC) $(KFLAGS) -S -o $(B)/gen/asm-offsets.s $<
	@{ echo "/* Generated from rtos/arch/arm64/asm-offsets.c; do not edit. */"; \
	   echo "#ifndef RTOS_GEN_ASM_OFFSETS_H"; echo "#define RTOS_GEN_ASM_OFFSETS_H"; \
	   sed -n 's/.*->\([A-Z_0-9]*\) #\{0,1\}\([0-9-]*\).*/#define \1 \2/p' $(B)/gen/asm-offsets.s; \
	   echo "#endif"; } > $@.tmp && mv $@.tmp $@

$(B)/%.o: %.c $(OFFSETS)
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(if $(findstring /apps/,$<),$(TCFLAGS),$(KFLAGS)) -MMD -MP -c -o $@ $<

$(B)/%.o: %.S $(OFFSETS)
	@mkdir -p $(dir $@)
	@echo "  AS      $<"
	$(Q)$(CC) $(AFLAGS) -MMD -MP -c -o $@ $<

$(B)/librtos.a: $(KOBJ)
	@rm -f $@
	@echo "  AR      $@"
	$(Q)$(CROSS)ar rcs $@ $^

# ---------------------------------------------------------------- hypervisor
H      := $(BUILD)/hyp
HFLAGS := -std=c11 -ffreestanding -fno-common -fno-stack-protector -fno-pic -mcpu=cortex-a72 \
          -mstrict-align -mno-outline-atomics -mgeneral-regs-only -O2 -g -fno-tree-loop-distribute-patterns \
          $(WARN) -Ihyp/include -Ihyp/arch/arm64/include -Ihyp/platform/qemu-virt -Ilib/include -I$(H)/gen
HSRC   := $(wildcard hyp/core/*.c lib/*.c) \
          $(filter-out hyp/arch/arm64/asm-offsets.c,$(wildcard hyp/arch/arm64/*.c))
HASRC  := $(wildcard hyp/arch/arm64/*.S)
HOBJ   := $(patsubst %.c,$(H)/%.o,$(HSRC)) $(patsubst %.S,$(H)/%.o,$(HASRC))
HOFFSETS := $(H)/gen/asm-offsets.h

# build/hyp/rtmux.img is the hypervisor alone; ./rtmux appends the configuration blob and the partitions'
# images to make a bootable system image (tools/rtmux/bundle.py).
hyp: $(H)/rtmux.img

$(HOFFSETS): hyp/arch/arm64/asm-offsets.c $(wildcard hyp/include/hyp/*.h hyp/arch/arm64/include/arch/*.h)
	@mkdir -p $(dir $@)
	@echo "  GEN     $@"
	$(Q)$(CC) $(HFLAGS) -S -o $(H)/gen/asm-offsets.s $<
	@{ echo "/* Generated from hyp/arch/arm64/asm-offsets.c; do not edit. */"; \
	   echo "#ifndef HYP_GEN_ASM_OFFSETS_H"; echo "#define HYP_GEN_ASM_OFFSETS_H"; \
	   sed -n 's/.*->\([A-Z_0-9]*\) #\{0,1\}\([0-9-]*\).*/#define \1 \2/p' $(H)/gen/asm-offsets.s; \
	   echo "#endif"; } > $@.tmp && mv $@.tmp $@

$(H)/%.o: %.c $(HOFFSETS)
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	$(Q)$(CC) $(HFLAGS) -MMD -MP -c -o $@ $<

$(H)/%.o: %.S $(HOFFSETS)
	@mkdir -p $(dir $@)
	@echo "  AS      $<"
	$(Q)$(CC) -g -Ihyp/include -Ihyp/arch/arm64/include -I$(H)/gen -MMD -MP -c -o $@ $<

$(H)/rtmux.elf: $(HOBJ) hyp/arch/arm64/hyp.ld
	@echo "  LD      $@"
	$(Q)$(LD) -nostdlib -T hyp/arch/arm64/hyp.ld -Map $(H)/rtmux.map -o $@ $(HOBJ) \
	    $$($(CC) -print-libgcc-file-name) --no-warn-rwx-segments

$(H)/rtmux.img: $(H)/rtmux.elf
	@echo "  IMAGE   $@"
	$(Q)$(OBJCOPY) -O binary $< $@

# Each application under rtos/apps/NAME/ is linked with the whole kernel library into NAME.img.
$(foreach a,$(APPS),$(eval $(B)/$(a).elf: $(patsubst %.c,$(B)/%.o,$(wildcard rtos/apps/$(a)/*.c)) \
    $(B)/librtos.a rtos/arch/arm64/rtos.ld))
$(B)/%.elf:
	@echo "  LD      $@"
	$(Q)$(LD) -nostdlib -T rtos/arch/arm64/rtos.ld -Map $(B)/$*.map -o $@ \
	    $(filter %.o,$^) --whole-archive $(B)/librtos.a --no-whole-archive \
	    $$($(CC) -print-libgcc-file-name) --no-warn-rwx-segments

$(B)/%.img: $(B)/%.elf
	@echo "  IMAGE   $@"
	$(Q)$(OBJCOPY) -O binary $< $@

# Objects are never intermediate files to be deleted after a link.
.SECONDARY:

-include $(shell find $(B) $(H) -name '*.d' 2>/dev/null)

# ---------------------------------------------------------------- run / test / bench
run: deps rtos hyp
	./rtmux run

unit: deps
	@$(MAKE) -s -C tests/unit/c HOSTCC=$(HOSTCC)

C_FILES = $(shell git ls-files -co --exclude-standard '*.c' '*.h')
format:
	clang-format -i $(C_FILES)

format-check:
	@clang-format --dry-run --Werror $(C_FILES) && echo "clang-format: clean"

lint: deps format-check
	.venv/bin/ruff check tools tests rtmux
	.venv/bin/ruff format --check tools tests rtmux

pytest-unit: deps
	$(PYTHON) -m pytest -q tests/unit/python

pytest-system: deps rtos
	$(PYTHON) -m pytest -q -m system tests/system

# One pytest session at the end gives CI its recognisable summary line.
test: deps lint unit rtos hyp
	$(PYTHON) -m pytest tests/unit/python tests/system

bench: deps rtos hyp
	./rtmux bench

clean:
	rm -rf $(BUILD)
	@$(MAKE) -s -C tests/unit/c clean
