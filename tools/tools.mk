# Benchmark helpers (make bench): an empty-uprobe floor and a recording
# generator.
BENCH_TOOLS := $(BUILD)/tools/bareprobe $(BUILD)/tools/genrec

$(BUILD)/tools/bareprobe.bpf.o: tools/bench/bareprobe.bpf.c
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/tools/bareprobe.skel.h: $(BUILD)/tools/bareprobe.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< > $@

$(BUILD)/tools/bareprobe: tools/bench/bareprobe.c $(BUILD)/tools/bareprobe.skel.h
	$(call msg,CC,$@)
	$(Q)$(CC) $(CPPFLAGS) -I$(BUILD)/tools $(CFLAGS) $(WARN) $< -o $@ $(LIBS)

$(BUILD)/tools/genrec: tools/bench/genrec.c $(LIB_OBJS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) $< $(LIB_OBJS) -o $@ $(LIBS)

bench-tools: $(BENCH_TOOLS)
.PHONY: bench-tools
