#!/bin/sh
# Prints the file-level call graph of a set of objects (one "caller callee"
# line per file that uses a symbol another defines) and fails when it has a
# cycle.  A file's undefined symbols (nm -u) name what it calls or reads;
# the file that defines each (nm --defined-only) is the edge's target.
# Calls through function pointers (the GPU model's gap sink) are not edges,
# which is what lets a layer hand results up without depending on it.
#
#   tools/callgraph.sh build/user/engine/*.o
set -eu
[ $# -gt 0 ] || { echo "usage: $0 OBJECT..." >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for o in "$@"; do
	[ -r "$o" ] || { echo "callgraph: cannot read $o" >&2; exit 2; }
	f=$(basename "$o" .o)
	nm --defined-only -g "$o" | awk -v f="$f" 'NF == 3 { print $3, f }'
done | sort -u > "$tmp/defs"
for o in "$@"; do
	f=$(basename "$o" .o)
	nm -u "$o" | awk -v f="$f" '{ print $NF, f }'
done | sort -u > "$tmp/uses"
# symbol caller + symbol definer -> caller definer, no self edges
join "$tmp/uses" "$tmp/defs" | awk '$2 != $3 { print $2, $3 }' | sort -u \
	> "$tmp/edges"
cat "$tmp/edges"
if ! tsort "$tmp/edges" > /dev/null 2> "$tmp/err"; then
	echo "callgraph: call cycle among these files:" >&2
	grep -v 'input contains a loop' "$tmp/err" | sed 's/^tsort: /  /' >&2
	exit 1
fi
