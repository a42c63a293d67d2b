#!/bin/sh
# The screen of `idlegap top`, driven by synthetic snapshots under tmux and
# read back with capture-pane: rows sorted by idle share with their causes,
# the job's steps, target strings escaped, keys q, p and s, a resize, Ctrl-Z
# and Ctrl-C; the terminal is as it was afterwards.  Without a terminal: one
# line per row (and one for the steps).
. "$(dirname "$0")/lib.sh"
FEED=$IG_TOP/build/tests/view/top_feed
command -v tmux > /dev/null || skip_all "tmux not found (Debian tmux)"
[ -x "$FEED" ] || skip_all "$FEED not built (make test-progs)"
SOCK=
trap 'for s in "$TMP"/tmux.*.sock; do tmux -S "$s" kill-server 2> /dev/null; done; rm -rf "$TMP"' EXIT

screen() { tmux -S "$SOCK" capture-pane -p; }
keys() { tmux -S "$SOCK" send-keys "$@"; sleep 0.6; }
# waits up to 5 s for PATTERN on the screen (or, with !, for it to go)
wait_for() {
	_i=0
	while [ $_i -lt 50 ]; do
		if [ "$1" = "!" ]; then screen | grep -q -- "$2" || return 0
		else screen | grep -q -- "$1" && return 0; fi
		sleep 0.1; _i=$((_i + 1))
	done
	return 1
}
first_row() { screen | sed -n 5p | awk '{ print $2 }'; }
pids() { screen | awk '/^ *[0-9]+ / { printf "%s ", $1 }'; }
records() { screen | sed -n 1p | grep -o '[0-9]* records/s'; }

# start [FEED ARGS]: under a shell with job control (so that Ctrl-Z stops
# the feed and the shell goes on), the terminal's settings saved before,
# when stopped and after; `fg` resumes a stopped feed.  Each run has its
# own tmux server.
runs=0
start() {
	runs=$((runs + 1))
	SOCK=$TMP/tmux.$runs.sock
	rm -f "$TMP/pid" "$TMP/before" "$TMP/stopped" "$TMP/after"
	SHELL=/bin/sh tmux -S "$SOCK" new-session -d -x 80 -y 24 "set -m; trap '' INT; \
stty -g > $TMP/before; echo READY; $FEED -P $TMP/pid $*; echo rc=\$?; \
stty -g > $TMP/stopped; [ -s $TMP/after ] || sleep 2; fg; stty -g > $TMP/after; sleep 60"
	wait_for "idlegap top"
}
# The shell writes $TMP/stopped after it echoes rc=: wait for it (10 s at most).
saved() { i=0; while [ ! -s "$1" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done; cat "$1"; }
tty_now() { stty -F "$(tmux -S "$SOCK" display -p '#{pane_tty}')" -g; }

ok "the view starts in 80x24" -- start
screen | sed 's/^/#  |/'
is "$(first_row)" trainsim "sorted by idle share: the storage job leads"
ok "its first cause with the detail line" -- sh -c "screen() { tmux -S '$SOCK' capture-pane -p; }; screen | sed -n 6p | grep -q 'storage *45%  file /data/shard-00007.bin'"
ok "a rank's wait for peers under its causes" -- sh -c "tmux -S '$SOCK' capture-pane -p | sed -n 8p | grep -q 'peer_wait *20%  rank 2'"
is "$(screen | sed -n 2p)" "steps: none found yet" "no steps: the second line says so"
ok "the target's escape is drawn escaped" -- sh -c "tmux -S '$SOCK' capture-pane -p | grep -q 'evil.x1b]0;pwned'"
ok "no line is wider than 80 columns" -- sh -c "! tmux -S '$SOCK' capture-pane -pJ | awk 'length > 80' | grep -q ."
ok "raw mode while it runs" -- test "$(tty_now)" != "$(cat "$TMP/before")"

is "$(pids)" "4242 31337 777 " "sorted by idle share"
keys s
is "$(pids)" "777 31337 4242 " "s: sorted by busy share"
keys s
is "$(pids)" "777 4242 31337 " "s again: sorted by pid"
keys s
is "$(pids)" "4242 31337 777 " "s again: by idle share"

keys p
ok "p: paused" -- wait_for PAUSED
r1=$(records); sleep 1; r2=$(records)
is "$r2" "$r1" "paused: the screen keeps its snapshot"
keys p
ok "p again: running" -- wait_for ! PAUSED
sleep 0.5
ok "running: new snapshots drawn" -- test "$(records)" != "$r1"

tmux -S "$SOCK" resize-window -x 120 -y 30
sleep 0.6
ok "a resize redraws to the new width" -- sh -c "tmux -S '$SOCK' capture-pane -p | sed -n 5p | awk 'length > 100' | grep -q ."

keys C-z
ok "Ctrl-Z: the shell's screen is back" -- wait_for "rc=148"
ok "Ctrl-Z: the view's screen is gone" -- wait_for ! "idlegap top"
is "$(saved "$TMP/stopped")" "$(cat "$TMP/before")" "Ctrl-Z: the terminal settings are back"
ok "fg: the view is back" -- wait_for "idlegap top"
ok "fg: raw again" -- test "$(tty_now)" != "$(cat "$TMP/before")"
keys q
ok "q: the view's screen is gone" -- wait_for ! "idlegap top"
ok "q: the shell's screen is as it was" -- wait_for READY
sleep 0.3
is "$(cat "$TMP/after")" "$(cat "$TMP/before")" "q: terminal settings restored"
tmux -S "$SOCK" kill-server

start
keys q
ok "q quits with 0" -- wait_for "rc=0"
tmux -S "$SOCK" kill-server

start
keys C-c
ok "Ctrl-C ends it by SIGINT" -- wait_for "rc=130"
ok "Ctrl-C: the shell's screen is back" -- wait_for READY
is "$(saved "$TMP/stopped")" "$(cat "$TMP/before")" "Ctrl-C: terminal settings restored"
tmux -S "$SOCK" kill-server

start
kill -TERM "$(cat "$TMP/pid")"
ok "SIGTERM: the shell's screen is back" -- wait_for "rc=143"
is "$(saved "$TMP/stopped")" "$(cat "$TMP/before")" "SIGTERM: terminal settings restored"
tmux -S "$SOCK" kill-server

# the job's steps: their rate and the last slow step, on the second line
start -S
is "$(screen | sed -n 2p)" "steps 183.2/s (pid 4242, GPU 0), last slow: step 196 storage 10.9 ms" \
	"the steps' rate and last slow step on the second line"
is "$(first_row)" trainsim "with steps: the rows below them"
ok "with steps: no line is wider than 80 columns" -- sh -c "! tmux -S '$SOCK' capture-pane -pJ | awk 'length > 80' | grep -q ."
tmux -S "$SOCK" kill-server

# more rows than fit: the screen says so and does not scroll
start -r 20
ok "rows that do not fit are counted" -- wait_for "more (a taller terminal"
is "$(screen | sed -n 1p | cut -c1-11)" "idlegap top" "the header stays on the first line"
tmux -S "$SOCK" kill-server

# no terminal: one line per row per snapshot
"$FEED" -n 2 -i 100 > "$TMP/lines" 2>&1
is "$(wc -l < "$TMP/lines")" 6 "without a terminal: one line per row per snapshot"
ok "the lines name the storage job's first cause" -- grep -q 'pid 4242 trainsim gpu 0 busy 35% idle 55% unresolved 10% first storage 45% file /data/shard-00007.bin' "$TMP/lines"
ok "the lines give a rank's wait for peers" -- grep -q 'pid 4242 trainsim .* rank 2 peer_wait 20% rec/s' "$TMP/lines"
ok "no escape character reaches the lines" -- sh -c "! grep -q \"$(printf '\033')\" '$TMP/lines'"
"$FEED" -n 1 -i 100 -r 4 > "$TMP/lines4" 2>&1
ok "a process on no known GPU has its own line, GPU ?" -- grep -q 'pid 2003 filler gpu ? busy' "$TMP/lines4"
"$FEED" -n 2 -i 100 -S > "$TMP/lines.steps" 2>&1
is "$(grep -c ' steps 183.2/s pid 4242 gpu 0 last_slow step 196 storage 10.9 ms$' "$TMP/lines.steps")" 2 \
	"with steps: one steps line per snapshot"
is "$(wc -l < "$TMP/lines.steps")" 8 "and one line per row"

# A live storage job under `idlegap top` (root, host-wide): the job is
# found, and its row shows storage leading within 3 s of its first gap
# (from the simulated GPU's own trace; the time is printed); its steps'
# rate, above 0, is on the second line with its pid while it runs.
if [ "$(id -u)" != 0 ]; then
	skip "a live storage job" "needs root"
	done_testing
	exit
fi
TS=$IG_TOP/build/trainsim
SOCK=$TMP/tmux.live.sock
tmux -S "$SOCK" new-session -d -x 100 -y 60 "$IG top 2> $TMP/top.err; echo rc=\$?; sleep 60"
sleep 1.5	# top is up and has looked once
LD_LIBRARY_PATH=$IG_TOP/build/simgpu SIMGPU_TRACE=$TMP/gpu.trace \
	"$TS" -s storage -t 8 -q --truth "$TMP/truth.json" > /dev/null 2>&1 &
job=$!
/usr/bin/python3 - "$SOCK" "$job" "$TMP/seen" "$TMP/steps" <<'PY'
import re, subprocess, sys, time
sock, pid, out, steps = sys.argv[1:5]
end = time.monotonic() + 10
seen = stepped = False
while time.monotonic() < end and not (seen and stepped):
    lines = subprocess.run(["tmux", "-S", sock, "capture-pane", "-p"],
                           capture_output=True, text=True).stdout.splitlines()
    for i, l in enumerate(lines[:-1]):
        if not seen and l.split()[:1] == [pid] and lines[i + 1].split()[:1] == ["storage"]:
            open(out, "w").write("%d\n%s\n%s\n" % (time.monotonic_ns(), l, lines[i + 1]))
            seen = True
    m = re.match(r"steps ([0-9.]+)/s \(pid (\d+),", lines[1] if len(lines) > 1 else "")
    if not stepped and m and float(m.group(1)) > 0 and m.group(2) == pid:
        open(steps, "w").write(lines[1] + "\n")
        stepped = True
    time.sleep(0.05)
PY
wait "$job"
tmux -S "$SOCK" send-keys q
ok "the live job's row shows storage leading" -- test -s "$TMP/seen"
sed -n '2,3s/^/# /p' "$TMP/seen" 2> /dev/null
ok "the live job's steps: a rate above 0 on the second line, with its pid" -- test -s "$TMP/steps"
sed 's/^/# /' "$TMP/steps" 2> /dev/null
delta=$(/usr/bin/python3 - "$TMP/gpu.trace" "$TMP/seen" <<'PY'
import sys
ops = sorted((int(f[2]), int(f[3])) for f in (l.split() for l in open(sys.argv[1])) if len(f) >= 4)
first = None
done = 0
for a, b in ops:
    if done and a - done >= 1000000:
        first = done
        break
    done = max(done, b)
try:
    seen = int(open(sys.argv[2]).readline())
except (OSError, ValueError):
    seen = None
print("%.2f" % ((seen - first) / 1e9) if first is not None and seen is not None else "none")
PY
)
diag "time to cause: $delta s after the job's first gap"
ok "storage leads within 3 s of the first gap" -- awk -v d="$delta" 'BEGIN { exit !(d != "none" && d <= 3) }'
# (removing the probes may take a while on a loaded machine: no deadline)
i=0
until tmux -S "$SOCK" capture-pane -p | grep -q rc= || [ $i -ge 300 ]; do sleep 0.1; i=$((i + 1)); done
ok "q quits the live view" -- sh -c "tmux -S '$SOCK' capture-pane -p | grep -q rc=0"
sed 's/^/# /' "$TMP/top.err"
tmux -S "$SOCK" kill-server 2> /dev/null

# The estimate of unresolved time, made in blocks of 5 s as they close
# (design §4.10): a per-op job (twokern, whose syncs wait) shows its GPU's
# last block under its row, here in the line output.
"$IG" top > "$TMP/est.lines" 2> "$TMP/est.err" &
top=$!
sleep 1.5
LD_LIBRARY_PATH=$IG_TOP/build/simgpu "$TS" -s twokern -n 1000000 -t 12 -q > /dev/null 2>&1 &
job=$!
wait "$job"
kill -INT "$top"
wait "$top"
est=$(grep "pid $job trainsim" "$TMP/est.lines" | grep -o 'est_unresolved_idle [0-9]*% ([0-9]*-[0-9]*%)' | tail -1)
diag "the last block: $est"
ok "a per-op job's line gives its GPU's estimate" test -n "$est"
ok "the estimate lies in its interval" -- sh -c "echo '$est' | awk -F'[ %()-]+' '{ exit !(\$3 <= \$2 && \$2 <= \$4) }'"
done_testing
