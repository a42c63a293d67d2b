# simnccl: the simulated NCCL, build/simgpu/libnccl.so.2, beside the
# simulated driver it launches its work through.  Compiled against the
# CUDA toolkit's nccl.h, so its ABI is nccl.h's.

SIMNCCL_SRCS := $(wildcard simgpu/nccl/*.c)
SIMNCCL_OBJS := $(patsubst simgpu/nccl/%.c,$(BUILD)/simgpu/nccl/%.o,\
		  $(SIMNCCL_SRCS))
SIMNCCL_LIB  := $(BUILD)/simgpu/libnccl.so.2
SIMGPU_TARGETS += $(SIMNCCL_LIB)

$(BUILD)/simgpu/nccl/%.o: simgpu/nccl/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) $(DEPFLAGS) $(SIMGPU_CFLAGS) \
		-c $< -o $@

# Linked to the simulated driver by soname, found beside it at run time.
$(SIMNCCL_LIB): $(SIMNCCL_OBJS) simgpu/nccl/libnccl.map $(SIMGPU_LIB)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) -shared -pthread -Wl,-soname,libnccl.so.2 \
		-Wl,--version-script=simgpu/nccl/libnccl.map -Wl,-z,defs \
		$(SIMNCCL_OBJS) $(SIMGPU_LIB) -Wl,-rpath,'$$ORIGIN' -o $@

-include $(SIMNCCL_OBJS:.o=.d)

# tests/nccl.t's checker links both simulated libraries directly.
SIMNCCL_TEST_PROGS := $(BUILD)/tests/nccl_check

$(BUILD)/tests/nccl_check: tests/nccl/nccl_check.c $(SIMNCCL_LIB)
	$(call msg,TEST-CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) $(DEPFLAGS) -pthread \
		-I$(CUDA_HOME)/include $< $(SIMNCCL_LIB) $(SIMGPU_LIB) \
		-Wl,-rpath,'$$ORIGIN/../simgpu' -o $@

test-progs: $(SIMNCCL_TEST_PROGS)

-include $(SIMNCCL_TEST_PROGS:=.d)
