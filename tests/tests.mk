# Unit tests: each tests/unit/test_*.c is a cmocka program linked with the
# engine library alone, plus the objects of another unit it names below;
# tests/run.sh runs them in TAP.
UNIT_SRCS  := $(wildcard tests/unit/test_*.c)
UNIT_PROGS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRCS))

$(BUILD)/tests/%: tests/unit/%.c $(ENGINE_LIB)
	$(call msg,TEST-CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) $(DEPFLAGS) $< $(filter %.o,$^) $(ENGINE_LIB) -o $@ $(LIBS) -lcmocka

# Tests of units outside the engine.
$(BUILD)/tests/test_cli: $(addprefix $(BUILD)/user/,modes/cli.o modes/cli_base.o probes/log.o)
$(BUILD)/tests/test_log: $(BUILD)/user/probes/log.o
$(BUILD)/tests/test_nvml_samples: $(BUILD)/user/host/nvml_samples.o
# the merge of several recordings: the report path whole (modes, views, probes)
$(BUILD)/tests/test_merge: $(LIB_OBJS)
$(BUILD)/tests/test_escape: $(BUILD)/user/modes/dump.o $(addprefix $(BUILD)/user/,stacks/pycode.o stacks/pynames.o)
$(BUILD)/tests/test_pycode: $(addprefix $(BUILD)/user/,probes/pylayout.o stacks/pycode.o stacks/pynames.o)
$(BUILD)/tests/test_identity: $(BUILD)/user/host/identity.o $(BUILD)/user/host/identity_runtime.o $(BUILD)/user/host/identity_rec.o
$(BUILD)/tests/test_metrics: $(addprefix $(BUILD)/user/,views/metrics.o views/metrics_labels.o views/metrics_text.o views/metrics_coll.o host/identity.o host/identity_runtime.o)
$(BUILD)/tests/test_metrics_coll: $(addprefix $(BUILD)/user/,views/metrics.o views/metrics_labels.o views/metrics_text.o views/metrics_coll.o host/identity.o host/identity_runtime.o)
$(BUILD)/tests/test_httpd: $(addprefix $(BUILD)/user/,views/httpd.o views/metrics.o views/metrics_labels.o views/metrics_text.o views/metrics_coll.o host/identity.o host/identity_runtime.o)
$(BUILD)/tests/test_probe_elf: $(addprefix $(BUILD)/user/,host/elfsym.o probes/cuda_attach.o \
	stream/cuda_api.o probes/log.o host/procfs.o probes/tracer.o probes/tracer_ring.o probes/tracer_probe.o probes/tracer_uprobe.o probes/tracer_unlink.o probes/tracer_maps.o)

test-progs: $(UNIT_PROGS) $(SIMGPU_TEST_PROGS) $(WORKLOAD_TEST_PROGS)
$(BUILD)/tests/test_probe_elf: | $(BUILD)/tests/fakecuda/libcuda.so.1
$(BUILD)/tests/test_discovery: $(addprefix $(BUILD)/user/,probes/discovery.o probes/discovery_emit.o probes/discovery_host.o probes/nccl_attach.o host/elfsym.o \
	probes/cuda_attach.o stream/cuda_api.o probes/log.o host/procfs.o probes/pyrt.o probes/tracer.o probes/tracer_ring.o probes/tracer_probe.o \
	probes/tracer_uprobe.o probes/tracer_unlink.o probes/tracer_maps.o) | $(BUILD)/tests/fakecuda/libcuda.so.1

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
include tests/fakenccl/fakenccl.mk

# The views: the Perfetto writer and `top`, with programs the .t scripts drive.
VIEW_OBJS := $(addprefix $(BUILD)/user/,views/pbwire.o views/perfetto.o)
$(BUILD)/tests/test_pbwire: $(VIEW_OBJS)
$(BUILD)/tests/test_timeline_peers: $(VIEW_OBJS) $(addprefix $(BUILD)/user/,views/timeline_build.o views/timeline_threads.o views/timeline_peers.o)
$(BUILD)/tests/test_progress: $(BUILD)/user/views/progress.o
$(BUILD)/tests/view/pf_synth: tests/perfetto/synth.c $(VIEW_OBJS) $(ENGINE_LIB)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) $(DEPFLAGS) $< $(filter %.o,$^) $(ENGINE_LIB) -o $@ $(LIBS)

test-progs: $(BUILD)/tests/view/pf_synth
-include $(BUILD)/tests/view/pf_synth.d
# The --html page of a long synthetic run (tests/html.t), and its strips.
$(BUILD)/tests/test_html_strip: $(BUILD)/user/views/html_strip.o
HTML_OBJS := $(addprefix $(BUILD)/user/,views/html.o views/html_strip.o views/html_data.o)
$(BUILD)/tests/view/html_synth: tests/html/synth.c $(HTML_OBJS) $(ENGINE_LIB)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) $(DEPFLAGS) $< $(filter %.o,$^) $(ENGINE_LIB) -o $@ $(LIBS)

test-progs: $(BUILD)/tests/view/html_synth
-include $(BUILD)/tests/view/html_synth.d
TOP_OBJS := $(addprefix $(BUILD)/user/,views/top_view.o views/top_term.o)
$(BUILD)/tests/view/top_feed: tests/top/feed.c $(TOP_OBJS) $(ENGINE_LIB)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) $(DEPFLAGS) $< $(filter %.o,$^) $(ENGINE_LIB) -o $@ $(LIBS)

test-progs: $(BUILD)/tests/view/top_feed
-include $(BUILD)/tests/view/top_feed.d
# Native frame names: against trainsim and the stand-in libcuda.
$(BUILD)/tests/test_symbolize: $(addprefix $(BUILD)/user/,stacks/symbolize.o host/elfsym.o host/procfs.o)
$(BUILD)/tests/test_symbolize: | $(BUILD)/trainsim $(BUILD)/tests/fakecuda/libcuda.so.1

# Serves the metrics of recorded window reports (tests/prometheus.t).
METRICS_SERVE := $(BUILD)/tests/lib/metrics_serve
$(METRICS_SERVE): tests/lib/metrics_serve.c $(addprefix $(BUILD)/user/,views/httpd.o \
		views/metrics.o views/metrics_labels.o views/metrics_text.o views/metrics_coll.o host/identity.o host/identity_runtime.o) $(ENGINE_LIB)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) $(DEPFLAGS) $< $(filter %.o,$^) $(ENGINE_LIB) -o $@ $(LIBS)

test-progs: $(METRICS_SERVE)
-include $(METRICS_SERVE).d
