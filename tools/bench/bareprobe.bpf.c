// SPDX-License-Identifier: GPL-2.0
/* The floor for the probe-cost benchmark: uprobes that do nothing. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

SEC("uprobe")
int bare_entry(void *ctx)
{
	return 0;
}

SEC("uretprobe")
int bare_return(void *ctx)
{
	return 0;
}
