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
