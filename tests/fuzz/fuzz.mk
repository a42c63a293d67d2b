# `make fuzz`: a libFuzzer harness (clang, ASan, UBSan) over the whole
# `report` path, seeded with the small real recordings in tests/fuzz/corpus.
# FUZZ_SECONDS=600 make fuzz for a long run (FUZZ_ARGS passes libFuzzer
# options, e.g. -max_len=32768, the smoke run's bound); tests/fuzz.t runs a fixed
# number of inputs in `make test`.
FUZZ_CC     ?= clang
FUZZ_FLAGS  := -g -O1 -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address,undefined \
	       -fno-sanitize-recover=undefined
FUZZ_SRCS   := $(filter-out user/modes/main.c,$(USER_SRCS))
FUZZ_OBJS   := $(patsubst user/%.c,$(BUILD)/fuzz/%.o,$(FUZZ_SRCS))
FUZZ_BIN    := $(BUILD)/fuzz/fuzz_report
FUZZ_SECONDS ?= 60

$(BUILD)/fuzz/%.o: user/%.c | $(BPF_SKELS)
	$(call msg,FUZZ-CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(FUZZ_CC) $(CPPFLAGS) $(FUZZ_FLAGS) $(WARN) $(DEPFLAGS) -c $< -o $@

$(FUZZ_BIN): tests/fuzz/fuzz_report.c $(FUZZ_OBJS)
	$(call msg,FUZZ-LD,$@)
	$(Q)$(FUZZ_CC) $(CPPFLAGS) $(FUZZ_FLAGS) -fsanitize=fuzzer $(WARN) $^ -o $@ $(LIBS)

fuzz-bin: $(FUZZ_BIN)

# Built for `make test` where clang can link a libFuzzer program
# (libclang-rt-dev); tests/fuzz.t says SKIP otherwise.
FUZZ_PROBE := printf 'int LLVMFuzzerTestOneInput(const char *d, long n) { return 0; }' | \
	$(FUZZ_CC) -fsanitize=fuzzer,address,undefined -x c - -o /dev/null 2>/dev/null
fuzz-maybe: | $(BPF_SKELS)
	$(Q)if $(FUZZ_PROBE); then $(MAKE) -q $(FUZZ_BIN) || $(MAKE) --no-print-directory $(FUZZ_BIN); fi

test-progs: fuzz-maybe

# New inputs go to $(BUILD)/fuzz/corpus; the checked-in seeds stay as they are.
fuzz: $(FUZZ_BIN)
	$(Q)mkdir -p $(BUILD)/fuzz/corpus $(BUILD)/fuzz/crashes
	$(Q)$(FUZZ_BIN) -max_total_time=$(FUZZ_SECONDS) -close_fd_mask=2 -timeout=20 \
		-artifact_prefix=$(BUILD)/fuzz/crashes/ -print_final_stats=1 $(FUZZ_ARGS) \
		$(BUILD)/fuzz/corpus tests/fuzz/corpus

.PHONY: fuzz fuzz-bin fuzz-maybe
-include $(FUZZ_OBJS:.o=.d)

# The identity parsers (cgroup, environ files, runtime records) under libFuzzer;
# tests/fuzz_agent.t runs it and the metrics one in `make test`.
FUZZ_ID_BIN := $(BUILD)/fuzz/fuzz_identity

$(FUZZ_ID_BIN): tests/fuzz/fuzz_identity.c $(BUILD)/fuzz/host/identity.o $(BUILD)/fuzz/host/identity_runtime.o $(BUILD)/fuzz/util/escape.o
	$(call msg,FUZZ-LD,$@)
	$(Q)$(FUZZ_CC) $(CPPFLAGS) $(FUZZ_FLAGS) -fsanitize=fuzzer $(WARN) $^ -o $@ -ljson-c

# The metrics registry fed window reports of any shape.
FUZZ_MX_BIN := $(BUILD)/fuzz/fuzz_metrics

$(FUZZ_MX_BIN): tests/fuzz/fuzz_metrics.c $(addprefix $(BUILD)/fuzz/,views/metrics.o views/metrics_labels.o \
		views/metrics_text.o views/metrics_coll.o host/identity.o host/identity_runtime.o util/escape.o)
	$(call msg,FUZZ-LD,$@)
	$(Q)$(FUZZ_CC) $(CPPFLAGS) $(FUZZ_FLAGS) -fsanitize=fuzzer $(WARN) $^ -o $@ -ljson-c -lpthread

# Raw bytes to the /metrics server over loopback.
FUZZ_HTTP_BIN := $(BUILD)/fuzz/fuzz_http

$(FUZZ_HTTP_BIN): tests/fuzz/fuzz_http.c $(BUILD)/fuzz/views/httpd.o
	$(call msg,FUZZ-LD,$@)
	$(Q)$(FUZZ_CC) $(CPPFLAGS) $(FUZZ_FLAGS) -fsanitize=fuzzer $(WARN) $^ -o $@ -lmicrohttpd -lpthread

fuzz-id-maybe: | $(BPF_SKELS)
	$(Q)if $(FUZZ_PROBE); then $(MAKE) -q $(FUZZ_ID_BIN) $(FUZZ_MX_BIN) $(FUZZ_HTTP_BIN) || \
		$(MAKE) --no-print-directory $(FUZZ_ID_BIN) $(FUZZ_MX_BIN) $(FUZZ_HTTP_BIN); fi

test-progs: fuzz-id-maybe
.PHONY: fuzz-id-maybe
