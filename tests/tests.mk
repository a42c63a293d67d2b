# Unit tests: each tests/unit/test_*.c is a cmocka program linked with the
# aggregator's code (everything but main.c); tests/run.sh runs them in TAP.
UNIT_SRCS  := $(wildcard tests/unit/test_*.c)
UNIT_PROGS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRCS))

$(BUILD)/tests/%: tests/unit/%.c $(LIB_OBJS)
	$(call msg,TEST-CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) $(DEPFLAGS) $< $(LIB_OBJS) -o $@ $(LIBS) -lcmocka

test-progs: $(UNIT_PROGS) $(SIMGPU_TEST_PROGS) $(WORKLOAD_TEST_PROGS)

.PHONY: test-progs
-include $(UNIT_PROGS:=.d)

# A stand-in libcuda for the probe tests and the probe-cost benchmark.
FAKECUDA := $(BUILD)/tests/fakecuda/libcuda.so.1 $(BUILD)/tests/fakecuda/fakecuda_app

$(BUILD)/tests/fakecuda/libcuda.so.1: tests/fakecuda/libcuda.c
	$(call msg,CC-SO,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(WARN) -fPIC -shared -fno-ipa-icf -Wl,-soname,libcuda.so.1 $< -o $@

$(BUILD)/tests/fakecuda/fakecuda_app: tests/fakecuda/app.c $(BUILD)/tests/fakecuda/libcuda.so.1
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(WARN) $< -o $@ $(BUILD)/tests/fakecuda/libcuda.so.1 -Wl,-rpath,'$$ORIGIN'

test-progs: $(FAKECUDA)

# Small programs that make known events for the tracer tests.
TEST_HELPERS := $(patsubst tests/progs/%.c,$(BUILD)/tests/progs/%,$(wildcard tests/progs/*.c))

$(BUILD)/tests/progs/%: tests/progs/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(WARN) $< -o $@ -lpthread

test-progs: $(TEST_HELPERS)
include tests/fuzz/fuzz.mk
