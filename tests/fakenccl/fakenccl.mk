# A stand-in libnccl.so.2 and a program calling it with known arguments,
# for the NCCL probe tests (tests/ncclprobe.t).
FAKENCCL := $(BUILD)/tests/fakenccl/libnccl.so.2 $(BUILD)/tests/fakenccl/fakenccl_app

$(BUILD)/tests/fakenccl/libnccl.so.2: tests/fakenccl/libnccl.c
	$(call msg,CC-SO,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(WARN) -I$(CUDA_HOME)/include -fPIC -shared -fno-ipa-icf \
		-Wl,-soname,libnccl.so.2 $< -o $@

$(BUILD)/tests/fakenccl/fakenccl_app: tests/fakenccl/app.c $(BUILD)/tests/fakenccl/libnccl.so.2
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(WARN) -I$(CUDA_HOME)/include $< -o $@ \
		$(BUILD)/tests/fakenccl/libnccl.so.2 -Wl,-rpath,'$$ORIGIN'

test-progs: $(FAKENCCL)

# The same NCCL linked into a library of another name, as libtorch_cuda.so
# holds it when NCCL is linked statically: not probed, and said.
$(BUILD)/tests/fakenccl/static/libtorch_cuda.so: tests/fakenccl/libnccl.c
	$(call msg,CC-SO,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(WARN) -I$(CUDA_HOME)/include -fPIC -shared -fno-ipa-icf \
		-Wl,-soname,libtorch_cuda.so $< -o $@

$(BUILD)/tests/fakenccl/static/fakenccl_app: tests/fakenccl/app.c $(BUILD)/tests/fakenccl/static/libtorch_cuda.so
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(WARN) -I$(CUDA_HOME)/include $< -o $@ \
		$(BUILD)/tests/fakenccl/static/libtorch_cuda.so -Wl,-rpath,'$$ORIGIN'

test-progs: $(BUILD)/tests/fakenccl/static/fakenccl_app

