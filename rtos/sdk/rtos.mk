# rtos SDK: the build of one rtos application (docs/posix.md, "Write your first application").
#
# In the application's Makefile:
#     RTOS_SDK ?= path/to/sdk
#     APP  := hello          # the image's name
#     SRCS := main.c         # its C sources
#     include $(RTOS_SDK)/rtos.mk
# `make` builds $(OUT)/$(APP).img, the image a system configuration's `image =` names (or
# `./rtmux rtos run --image`), and $(OUT)/$(APP).elf, the same with its symbols for a debugger.
# Set HEAP_SIZE (bytes, the C library's malloc heap; main()'s stack comes from it) and CFLAGS as needed.

RTOS_SDK  ?= $(patsubst %/,%,$(dir $(lastword $(MAKEFILE_LIST))))
CROSS     ?= aarch64-linux-gnu-
PICOLIBC  ?= /usr/lib/picolibc/aarch64-linux-gnu
OUT       ?= build
HEAP_SIZE ?= 1048576
CFLAGS    ?= -O2 -g -Wall -Wextra
RTOS_CC   := $(CROSS)gcc

ifeq ($(APP),)
$(error rtos.mk: set APP (the image's name) before including it)
endif
ifeq ($(strip $(SRCS)),)
$(error rtos.mk: set SRCS (the application's C sources) before including it)
endif
ifeq ($(wildcard $(PICOLIBC)/lib/libc.a),)
$(error rtos.mk: picolibc not found in $(PICOLIBC): install Debian's picolibc-aarch64-linux-gnu (or set PICOLIBC))
endif

# The rtos's CPU (and what the libraries were built for); thread-local data is local-exec: one image.
RTOS_CPPFLAGS := -nostdinc -isystem $(RTOS_SDK)/include -isystem $(PICOLIBC)/include \
                 -isystem $(shell $(RTOS_CC) -print-file-name=include)
RTOS_ARCHFLAGS := -mcpu=cortex-a72 -fno-pic -ftls-model=local-exec -fno-stack-protector
RTOS_LIBS := $(RTOS_SDK)/lib/librtos-posix.a $(PICOLIBC)/lib/libc.a $(PICOLIBC)/lib/libm.a \
             $(shell $(RTOS_CC) -print-libgcc-file-name)
RTOS_OBJS := $(addprefix $(OUT)/,$(notdir $(SRCS:.c=.o)))

.PHONY: all clean
all: $(OUT)/$(APP).img

define rtos_object
$(OUT)/$(notdir $(1:.c=.o)): $(1) $(RTOS_SDK)/VERSION
	@mkdir -p $(OUT)
	$(RTOS_CC) $(RTOS_CPPFLAGS) $(CPPFLAGS) $(RTOS_ARCHFLAGS) $(CFLAGS) $(EXTRA_CFLAGS) -MD -MP -c -o $$@ $(1)
endef
$(foreach s,$(SRCS),$(eval $(call rtos_object,$(s))))

# The kernel library whole (its boot code and vectors are reached by no symbol), then the POSIX layer,
# the C library and libgcc, which refer to each other.
$(OUT)/$(APP).elf: $(RTOS_OBJS) $(RTOS_SDK)/lib/librtos.a $(RTOS_SDK)/lib/librtos-posix.a $(RTOS_SDK)/lib/rtos.ld
	$(CROSS)ld -nostdlib --defsym=__rtos_heap_size=$(HEAP_SIZE) -T $(RTOS_SDK)/lib/rtos.ld \
	    -Map $(OUT)/$(APP).map --no-warn-rwx-segments -o $@ $(RTOS_OBJS) \
	    --whole-archive $(RTOS_SDK)/lib/librtos.a --no-whole-archive --start-group $(RTOS_LIBS) --end-group

$(OUT)/$(APP).img: $(OUT)/$(APP).elf
	$(CROSS)objcopy -O binary $< $@

clean:
	rm -rf $(OUT)

-include $(RTOS_OBJS:.o=.d)
