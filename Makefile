# idlegap — see README.md.  `make V=1` for full command lines.
.DELETE_ON_ERROR:
.SUFFIXES:

PREFIX    ?= /usr/local
CUDA_HOME ?= /usr/local/cuda
# x86 (x86-64) or arm64: `make ARCH=arm64` cross-builds into build/arm64
# with Debian's aarch64 toolchain and an arm64 sysroot of Debian packages
# (tools/arm64-sysroot.sh; docs/design.md §2.6).
ARCH      ?= x86
ifeq ($(ARCH),arm64)
BUILD     ?= build/arm64
ARM64_DIR := $(BUILD)/deps
SYSROOT   := $(ARM64_DIR)/sysroot
CROSS     ?= aarch64-linux-gnu-
CC        := $(CROSS)gcc
AR        := $(CROSS)ar
# headers and libraries from the sysroot; what they load, found at link time
ARCH_FLAGS := -isystem $(SYSROOT)/usr/include -isystem $(SYSROOT)/usr/include/aarch64-linux-gnu \
	      -L$(SYSROOT)/usr/lib/aarch64-linux-gnu -L$(SYSROOT)/lib/aarch64-linux-gnu \
	      -Wl,-rpath-link,$(SYSROOT)/usr/lib/aarch64-linux-gnu \
	      -Wl,-rpath-link,$(SYSROOT)/lib/aarch64-linux-gnu
ARCH_DEPS := $(SYSROOT)/.done
IMAGE_ROOTS := --root $(SYSROOT)
else ifeq ($(ARCH),x86)
BUILD     ?= build
else
$(error ARCH=$(ARCH): x86 or arm64)
endif

CC        ?= cc
CLANG     ?= clang
BPFTOOL   ?= bpftool
PYTHON    ?= /usr/bin/python3

Q := $(if $(V),,@)
msg = $(if $(V),,@printf '  %-8s %s\n' '$(1)' '$(2)';)

CFLAGS    ?= -O2 -g
override CFLAGS += $(ARCH_FLAGS)
WARN      := -Wall -Wextra -Werror
CPPFLAGS  += -D_GNU_SOURCE -I$(BUILD) -Iuser
DEPFLAGS   = -MMD -MP
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Ivmlinux/$(ARCH) \
	      -Wall -Werror -Wno-unused-function
LIBS      := -lbpf -ldw -lelf -lz -ljson-c -lmicrohttpd -lpthread -ldl -lm

# Debian packages the build, demo and tests need.
DEB_PKGS := clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev \
	    libdw-dev libjson-c-dev libcmocka-dev pkg-config python3 perl make gcc \
	    libclang-rt-dev protobuf-compiler tmux libmicrohttpd-dev prometheus \
	    curl python3-yaml qemu-system-x86 busybox-static kmod podman runc \
	    gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-system-arm qemu-user-static \
	    binfmt-support debootstrap e2fsprogs cpio strace libffi-dev chromium

all: $(BUILD)/idlegap

# ---- idlegap --------------------------------------------------------------
BPF_SRCS  := $(wildcard bpf/*.bpf.c)
BPF_OBJS  := $(patsubst bpf/%.bpf.c,$(BUILD)/bpf/%.bpf.o,$(BPF_SRCS))
BPF_SKELS := $(patsubst bpf/%.bpf.c,$(BUILD)/%.skel.h,$(BPF_SRCS)) $(BUILD)/idlegap_compat.skel.h
# a folder's sources, and those of its sub-folders (user/engine/gpu/, ...)
USER_SRCS := $(wildcard user/*/*.c user/*/*/*.c)
USER_OBJS := $(patsubst user/%.c,$(BUILD)/user/%.o,$(USER_SRCS))
# Everything but main.o, for linking tools against the real code.
LIB_OBJS  := $(filter-out $(BUILD)/user/modes/main.o,$(USER_OBJS))
# The engine with the record format, recordings and reordering: no libbpf,
# no tracer.  Unit tests link this library alone, so the linker refuses an
# engine dependency on the probe layer.
# Its sources are those of its folders and their sub-folders (docs/design.md §3.1).
ENGINE_DIRS := engine stacks stream host util
ENGINE_SRCS := $(wildcard $(ENGINE_DIRS:%=user/%/*.c) $(ENGINE_DIRS:%=user/%/*/*.c))
ENGINE_OBJS := $(patsubst user/%.c,$(BUILD)/user/%.o,$(ENGINE_SRCS))
ENGINE_LIB  := $(BUILD)/libidlegap-engine.a

$(BUILD)/bpf/%.bpf.o: bpf/%.bpf.c
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -MMD -MP -c $< -o $@

# The compat object: the same programs for kernels before 5.17 (bpf/compat.bpf.h).
# User space opens it through idlegap.skel.h, so its programs, maps and global
# data must be laid out as the main object's: the build compares the two.
$(BUILD)/bpf/idlegap_compat.bpf.o: bpf/idlegap.bpf.c
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -DIG_COMPAT -MMD -MP -MT $@ -c $< -o $@

$(BUILD)/idlegap_compat.skel.h: $(BUILD)/bpf/idlegap_compat.bpf.o $(BUILD)/idlegap.skel.h
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name idlegap_compat_bpf > $@
	$(Q)for f in $(BUILD)/idlegap.skel.h $@; do \
		sed -n '/^\tstruct [a-z_]*__\(rodata\|data\|bss\|kconfig\) {/,/^\t} \*/p; /^\t\tstruct bpf_\(map\|program\) \*/p' $$f | \
		sed 's/idlegap_compat_bpf/idlegap_bpf/' > $$f.layout; done; \
	grep -v -e 'ig_cc_' -e 'path_walks' $@.layout | cmp -s - $(BUILD)/idlegap.skel.h.layout || \
		{ echo "idlegap_compat.bpf.o differs from idlegap.bpf.o in its maps, programs or global data" >&2; \
		  diff $(BUILD)/idlegap.skel.h.layout $@.layout >&2; rm -f $@; exit 1; }

.SECONDARY: $(BPF_OBJS) $(BUILD)/bpf/idlegap_compat.bpf.o

$(BUILD)/%.skel.h: $(BUILD)/bpf/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@

$(BUILD)/user/%.o: user/%.c | $(BPF_SKELS) $(ARCH_DEPS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) $(DEPFLAGS) -c $< -o $@

$(ENGINE_LIB): $(ENGINE_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@
	$(Q)$(AR) rcs $@ $^

$(BUILD)/idlegap: $(filter-out $(ENGINE_OBJS),$(USER_OBJS)) $(ENGINE_LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ -o $@ $(LIBS)

# The --html page's markup and script, which the assembler builds into
# the object (.incbin in user/views/html.c).
$(BUILD)/user/views/html.o: user/views/html_page.html user/views/html_page.js

# The release: VERSION names the binary's --version and the image's tag.
IG_VERSION := $(shell cat VERSION)
$(BUILD)/user/modes/cli.o: CPPFLAGS += -DIG_VERSION='"$(IG_VERSION)"'
$(BUILD)/user/modes/cli.o: VERSION

$(ARM64_DIR)/sysroot/.done: tools/arm64-sysroot.sh
	$(call msg,SYSROOT,$(ARM64_DIR))
	$(Q)mkdir -p $(ARM64_DIR)
	$(Q)tools/arm64-sysroot.sh $(ARM64_DIR)
	$(Q)touch $@

# ---- the container image (deploy/mkimage.py; docs/fleet.md, "The image") ----
IMAGE_ARCH := $(if $(filter arm64,$(ARCH)),arm64,amd64)
IMAGE      := $(BUILD)/idlegap-image-$(IG_VERSION)-$(IMAGE_ARCH).oci.tar
# file times in the image: the last commit's, so a rebuild gives the same bytes
IMAGE_EPOCH = $(shell git log -1 --format=%ct 2>/dev/null || echo 0)

image: $(IMAGE)

$(IMAGE): $(BUILD)/idlegap docs/idlegap.8 deploy/mkimage.py VERSION
	$(call msg,IMAGE,$@)
	$(Q)SOURCE_DATE_EPOCH=$(IMAGE_EPOCH) $(PYTHON) deploy/mkimage.py --arch $(IMAGE_ARCH) \
		$(IMAGE_ROOTS) --tag idlegap:$(IG_VERSION) --out $@ \
		--entrypoint /usr/sbin/idlegap --cmd agent \
		--label org.opencontainers.image.description="idlegap: why GPUs idle" \
		$(BUILD)/idlegap:/usr/sbin/idlegap docs/idlegap.8:/usr/share/man/man8/idlegap.8 \
		$(if $(V),,> /dev/null)

# ---- arm64 under emulation (tools/test-arm64.sh; docs/kernels.md, "arm64") ----
# Debian's arm64 kernel under qemu-system-aarch64 (TCG), an arm64 Debian
# userland, the cross-built tree inside: check, a storage run, a GIL run
# and a Python program with their Python stacks, the unit tests.
test-arm64: deps
	$(Q)$(MAKE) --no-print-directory ARCH=arm64 all test-progs
	$(Q)tools/test-arm64.sh

.PHONY: test-arm64

# ---- parts with their own fragments ---------------------------------------
include simgpu/simgpu.mk
include workload/workload.mk
include tests/tests.mk
include tools/tools.mk

all: $(SIMGPU_TARGETS) $(WORKLOAD_TARGETS)

# ---- set-up, demo, tests, bench -------------------------------------------
# Installs what is missing; a fast no-op when everything is present.
deps:
	@missing=$$(for p in $(DEB_PKGS); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; \
	done); \
	if [ -n "$$missing" ]; then \
		echo "installing: $$missing"; \
		if [ "$$(id -u)" != 0 ]; then echo "make deps: run as root (sudo make ...) to install: $$missing" >&2; exit 1; fi; \
		DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $$missing || \
		{ apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $$missing; }; \
	fi
	@test -f $(CUDA_HOME)/include/cuda.h || \
		{ echo "make deps: $(CUDA_HOME)/include/cuda.h not found; install the CUDA toolkit or set CUDA_HOME" >&2; exit 1; }

demo: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)tools/demo.sh

test: deps
	$(Q)$(MAKE) --no-print-directory all test-progs image
	$(Q)tests/run.sh

# Debian's 5.10 and 6.1 kernels under QEMU (tests/kernels.t; KERNELS="6.1" for one), and the
# guest watchdog on a planted hang (tests/kernels-hang.t); `make test` runs them with IG_LONG=1
test-kernels: deps
	$(Q)$(MAKE) --no-print-directory all test-progs
	$(Q)IG_TOP=$(CURDIR) prove -v tests/kernels.t tests/kernels-hang.t

# the test fixture of the current Python stack (tests/forky.t): a Debian forky root with
# python3.14, python3-torch and python3.15, in build/forky (about 2 GiB, minutes)
forky-root:
	$(Q)tests/forky/build.sh $(BUILD)/forky

# the free-threaded CPython test fixture (tests/pystacks.t, tests/freethreaded.t):
# CPython 3.14 built with --disable-gil into build/freethreaded (10-20 minutes, no root)
free-threaded:
	$(Q)tests/freethreaded/build.sh $(BUILD)/freethreaded

bench: deps
	$(Q)$(MAKE) --no-print-directory all test-progs bench-tools
	$(Q)$(PYTHON) tools/bench.py

# the same rows, shorter runs: under 6 minutes
bench-quick: deps
	$(Q)$(MAKE) --no-print-directory all test-progs bench-tools
	$(Q)$(PYTHON) tools/bench.py --quick

# not in CI: an hour (SOAK_SECONDS) of the agent and `run` left running,
# their RSS every 10 s
soak: deps
	$(Q)$(MAKE) --no-print-directory all test-progs
	$(Q)$(PYTHON) tools/soak.py

install: $(BUILD)/idlegap
	install -D -m 0755 $(BUILD)/idlegap $(DESTDIR)$(PREFIX)/sbin/idlegap
	install -D -m 0644 docs/idlegap.8 $(DESTDIR)$(PREFIX)/share/man/man8/idlegap.8

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/sbin/idlegap $(DESTDIR)$(PREFIX)/share/man/man8/idlegap.8

vmlinux:
	tools/gen-vmlinux.sh

clean:
	rm -rf $(BUILD)

.PHONY: all deps demo test test-kernels forky-root free-threaded bench bench-quick install uninstall vmlinux clean image soak

-include $(USER_OBJS:.o=.d) $(BPF_OBJS:.o=.d) $(BUILD)/bpf/idlegap_compat.bpf.d
