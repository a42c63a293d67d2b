# trainsim: the training-loop workload, build/trainsim.  It loads the
# driver with dlopen, so it needs only cuda.h at build time.

WORKLOAD_SRCS := $(wildcard workload/*.c)
WORKLOAD_OBJS := $(patsubst workload/%.c,$(BUILD)/workload/%.o,\
		   $(WORKLOAD_SRCS)) $(BUILD)/workload/ptx.o
WORKLOAD_TARGETS := $(BUILD)/trainsim
WORKLOAD_TEST_PROGS :=

$(BUILD)/workload/%.o: workload/%.c workload/workload.mk
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) $(DEPFLAGS) -pthread \
		-fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
		-I$(CUDA_HOME)/include -c $< -o $@

# The kernels' PTX, embedded with .incbin (paths are from the top).
$(BUILD)/workload/ptx.o: workload/ptx.S workload/spin.ptx
	$(call msg,AS,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -c $< -o $@

$(BUILD)/trainsim: $(WORKLOAD_OBJS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ -o $@ -pthread -ldl

-include $(WORKLOAD_OBJS:.o=.d)
