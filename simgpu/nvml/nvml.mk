# simnvml: the simulated NVML, build/simgpu/libnvidia-ml.so.1, beside the
# simulated driver whose machine state (simgpu/machine.c) it reads.
# Compiled against the CUDA toolkit's nvml.h when it has one, else against
# simgpu/nvml/include/nvml.h, which declares the part of NVML's API that
# simnvml and its tests use, as NVML's API reference documents it.

SIMNVML_INC  := $(if $(wildcard $(CUDA_HOME)/include/nvml.h),\
		  $(CUDA_HOME)/include,simgpu/nvml/include)
SIMNVML_SRCS := $(wildcard simgpu/nvml/*.c)
SIMNVML_OBJS := $(patsubst simgpu/nvml/%.c,$(BUILD)/simgpu/nvml/%.o,\
		  $(SIMNVML_SRCS)) $(BUILD)/simgpu/nvml/machine.o
SIMNVML_LIB  := $(BUILD)/simgpu/libnvidia-ml.so.1
SIMGPU_TARGETS += $(SIMNVML_LIB)

$(BUILD)/simgpu/nvml/%.o: simgpu/nvml/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) $(DEPFLAGS) -fPIC \
		-fvisibility=hidden -pthread -I$(SIMNVML_INC) -c $< -o $@

$(BUILD)/simgpu/nvml/machine.o: simgpu/machine.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) $(DEPFLAGS) -fPIC \
		-fvisibility=hidden -pthread -c $< -o $@

$(SIMNVML_LIB): $(SIMNVML_OBJS) simgpu/nvml/libnvidia-ml.map
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) -shared -pthread -Wl,-soname,libnvidia-ml.so.1 \
		-Wl,--version-script=simgpu/nvml/libnvidia-ml.map -Wl,-z,defs \
		$(SIMNVML_OBJS) -o $@

-include $(SIMNVML_OBJS:.o=.d)
