# simgpu: the simulated CUDA driver, build/simgpu/libcuda.so.1, and the C
# programs tests/simgpu.t runs against it.

SIMGPU_SRCS := $(wildcard simgpu/*.c)
SIMGPU_OBJS := $(patsubst simgpu/%.c,$(BUILD)/simgpu/%.o,$(SIMGPU_SRCS))
SIMGPU_LIB  := $(BUILD)/simgpu/libcuda.so.1
SIMGPU_TARGETS := $(SIMGPU_LIB)

# idlegap puts one uprobe on each entry point, so no two may share an
# address: keep GCC from folding identical wrappers into one.
SIMGPU_NOICF := $(shell $(CC) -fno-ipa-icf -x c -c /dev/null -o /dev/null \
		  2>/dev/null && echo -fno-ipa-icf)
SIMGPU_CFLAGS := -fPIC -fvisibility=hidden $(SIMGPU_NOICF) -pthread \
		 -I$(CUDA_HOME)/include

$(BUILD)/simgpu/%.o: simgpu/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) $(DEPFLAGS) $(SIMGPU_CFLAGS) \
		-c $< -o $@

$(SIMGPU_LIB): $(SIMGPU_OBJS) simgpu/libcuda.map
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) -shared -pthread -Wl,-soname,libcuda.so.1 \
		-Wl,--version-script=simgpu/libcuda.map -Wl,-z,defs \
		$(SIMGPU_OBJS) -o $@

# Test programs link the simulator directly and find it through their
# RUNPATH, so they never pick up a real driver.
SIMGPU_TEST_SRCS  := $(wildcard tests/simgpu/*.c)
SIMGPU_TEST_PROGS := $(patsubst tests/simgpu/%.c,$(BUILD)/tests/simgpu_%,\
		       $(SIMGPU_TEST_SRCS))

$(BUILD)/tests/simgpu_%: tests/simgpu/%.c $(SIMGPU_LIB) $(SIMNVML_LIB)
	$(call msg,TEST-CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) $(DEPFLAGS) -pthread \
		-I$(CUDA_HOME)/include -I$(SIMNVML_INC) -Itests/simgpu $< \
		$(SIMGPU_LIB) \
		-Wl,-rpath,'$$ORIGIN/../simgpu' -ldl -lm -o $@

-include $(SIMGPU_OBJS:.o=.d) $(SIMGPU_TEST_PROGS:=.d)

include simgpu/nccl/nccl.mk
include simgpu/nvml/nvml.mk
