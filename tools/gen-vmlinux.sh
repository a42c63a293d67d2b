#!/bin/sh
# Regenerates vmlinux/x86/vmlinux.h from the running kernel's BTF.
set -eu
cd "$(dirname "$0")/.."
btf=${1:-/sys/kernel/btf/vmlinux}
[ -r "$btf" ] || { echo "gen-vmlinux: $btf not readable (kernel without BTF?)" >&2; exit 1; }
bpftool btf dump file "$btf" format c > vmlinux/x86/vmlinux.h.tmp
mv vmlinux/x86/vmlinux.h.tmp vmlinux/x86/vmlinux.h
echo "vmlinux/x86/vmlinux.h regenerated from $btf"
