# idlegap — see README.md.  `make V=1` for full command lines.
.DELETE_ON_ERROR:
.SUFFIXES:

BUILD     ?= build
PREFIX    ?= /usr/local
CUDA_HOME ?= /usr/local/cuda
ARCH      := x86

CC        ?= cc
CLANG     ?= clang
BPFTOOL   ?= bpftool
PYTHON    ?= /usr/bin/python3

Q := $(if $(V),,@)
msg = $(if $(V),,@printf '  %-8s %s\n' '$(1)' '$(2)';)

CFLAGS    ?= -O2 -g
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
	    curl python3-yaml

all: $(BUILD)/idlegap

# ---- idlegap --------------------------------------------------------------
BPF_SRCS  := $(wildcard bpf/*.bpf.c)
BPF_OBJS  := $(patsubst bpf/%.bpf.c,$(BUILD)/bpf/%.bpf.o,$(BPF_SRCS))
BPF_SKELS := $(patsubst bpf/%.bpf.c,$(BUILD)/%.skel.h,$(BPF_SRCS))
USER_SRCS := $(wildcard user/*.c user/engine/*.c)
USER_OBJS := $(patsubst user/%.c,$(BUILD)/user/%.o,$(USER_SRCS))
# Everything but main.o, for linking tools against the real code.
LIB_OBJS  := $(filter-out $(BUILD)/user/main.o,$(USER_OBJS))
# The engine with the record format, recordings and reordering: no libbpf,
# no tracer.  Unit tests link this library alone, so the linker refuses an
# engine dependency on the probe layer.
ENGINE_SRCS := $(wildcard user/engine/*.c) user/records.c user/recording.c user/crc32.c \
	       user/reorder.c user/cuda_api.c user/escape.c \
	       user/outfile.c user/folded.c user/ustacks.c \
	       user/pynames.c user/pycode.c
ENGINE_OBJS := $(patsubst user/%.c,$(BUILD)/user/%.o,$(ENGINE_SRCS))
ENGINE_LIB  := $(BUILD)/libidlegap-engine.a

$(BUILD)/bpf/%.bpf.o: bpf/%.bpf.c
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -MMD -MP -c $< -o $@

.SECONDARY: $(BPF_OBJS)

$(BUILD)/%.skel.h: $(BUILD)/bpf/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@

$(BUILD)/user/%.o: user/%.c | $(BPF_SKELS)
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
	$(Q)$(MAKE) --no-print-directory all test-progs
	$(Q)tests/run.sh

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

.PHONY: all deps demo test bench bench-quick soak install uninstall vmlinux clean

-include $(USER_OBJS:.o=.d) $(BPF_OBJS:.o=.d)
