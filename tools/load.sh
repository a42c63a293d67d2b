#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# load.sh: a busy host for the test suite, started and stopped on demand.
#
# USAGE (as root)
#     tools/load.sh start [SECONDS]   # two CPU-bound loops at nice 0 and a
#                                     # cold-read loop on the disk of /tmp;
#                                     # it ends by itself after SECONDS
#                                     # (default 7200)
#     tools/load.sh stop              # stops everything it started
#     tools/load.sh status            # running or not, with its processes
#
# The cold reads are O_DIRECT reads (dd iflag=direct) of a 1 GiB file made
# once under /var/tmp/idlegap-load, so every read goes to the disk and no
# cache is dropped for anyone else.  The load runs in a session of its own;
# its session id is kept in /run/idlegap-load/pid (a root-owned directory),
# and `stop` signals that session's processes alone.  Each loop runs under `timeout`,
# so a load nobody stops ends by itself.
set -eu
RUN=/run/idlegap-load
PIDF=$RUN/pid
DATA=${IG_LOAD_DATA:-/var/tmp/idlegap-load}

die() { echo "load.sh: $*" >&2; exit 1; }
usage() { sed -n 's/^#     //p' "$0" >&2; exit 2; }

# a directory of root's own: not a link, owned by root, not writable by others
safe_dir() {
	[ -d "$1" ] || mkdir -m 0700 "$1"
	[ ! -L "$1" ] && [ "$(stat -c %u "$1")" = 0 ] &&
		[ "$(stat -c %a "$1")" = 700 ] || die "$1 is not a root-owned 0700 directory"
}

running() {
	[ -f "$PIDF" ] || return 1
	sid=$(cat "$PIDF")
	[ -n "$(ps -o pid= -s "$sid" 2>/dev/null)" ]
}

start() {
	life=${1:-7200}
	case $life in '' | *[!0-9]*) die "SECONDS must be a whole number: $life";; esac
	[ "$(id -u)" = 0 ] || die "run as root"
	safe_dir "$RUN"
	safe_dir "$DATA"
	running && die "already running (session $(cat "$PIDF")); tools/load.sh stop first"
	if [ ! -f "$DATA/cold.bin" ] || [ "$(stat -c %s "$DATA/cold.bin")" -lt 1073741824 ]; then
		dd if=/dev/urandom of="$DATA/cold.bin.new" bs=1M count=1024 status=none
		mv "$DATA/cold.bin.new" "$DATA/cold.bin"
	fi
	# setsid: a session (and process group) of its own, its leader's pid
	# written first; nice -n 0 from wherever this shell was niced is not 0,
	# so each loop sets its niceness itself
	setsid sh -c '
		echo $$ > "$1.new" && mv "$1.new" "$1"
		life=$2 data=$3
		for i in 1 2; do
			timeout "$life" sh -c "renice -n 0 -p \$\$ > /dev/null; while :; do :; done" &
		done
		timeout "$life" sh -c "renice -n 0 -p \$\$ > /dev/null
			while :; do dd if=\"$data/cold.bin\" of=/dev/null bs=1M iflag=direct status=none || sleep 1; done" &
		wait
		rm -f "$1"' load "$PIDF" "$life" "$DATA" < /dev/null > /dev/null 2>&1 &
	i=0
	while [ ! -s "$PIDF" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	running || die "the load did not start"
	echo "load.sh: started (session $(cat "$PIDF")): 2 CPU loops at nice 0, O_DIRECT reads of $DATA/cold.bin; ends by itself in ${life} s"
}

stop() {
	if ! running; then
		rm -f "$PIDF"
		echo "load.sh: not running"
		return 0
	fi
	sid=$(cat "$PIDF")
	# the session's processes (timeout puts each loop in a process group
	# of its own, all in the session)
	pkill -TERM -s "$sid" || true
	i=0
	while running && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	if running; then pkill -KILL -s "$sid" || true; fi
	rm -f "$PIDF"
	echo "load.sh: stopped (session $sid)"
}

status() {
	if running; then
		echo "load.sh: running (session $(cat "$PIDF"))"
		ps -o pid,ni,etimes,args -s "$(cat "$PIDF")"
	else
		echo "load.sh: not running"
		return 1
	fi
}

case ${1:-} in
start) shift; start "$@";;
stop) stop;;
status) status;;
*) usage;;
esac
