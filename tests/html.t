#!/bin/sh
# `--html FILE`: the page, as headless Chromium shows it from a file.
# A synthetic 10-minute run on 8 GPUs (every state in every 20 ms) makes a
# page under 5 MB, whose strips' coloured areas are the shares fed in; a
# page with a script error, or with a strip drawn in the wrong colour,
# fails the same checks.  As root: a storage job under `idlegap run
# --html`, and its recording under `idlegap report --html`: nothing on
# the console, no script error, each GPU strip's colours in the report's
# shares to 1% and the flame graph's roots as wide as the causes' seconds,
# measured in the screenshot's pixels (tests/html/check_page.py); the
# strip zooms, pans and comes back to the whole run; and 4
# ranks of an NCCL job, three waiting for the starved one.
. "$(dirname "$0")/lib.sh"
SYNTH=$IG_TOP/build/tests/view/html_synth
CHECK=$IG_TOP/tests/html/check_page.py
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
[ -x "$CHROMIUM" ] || skip_all "$CHROMIUM not found (Debian chromium: make deps)"
[ -x "$SYNTH" ] || skip_all "$SYNTH not built (make test-progs)"
MAX_BYTES=5000000

# shot PAGE: PAGE.png (the screenshot), PAGE.dom (the DOM after the
# script), PAGE.log (the console), from one run with a profile of its own
# and nothing to reach: the network is closed here, and the page asks none
shot() {
	prof=$(mktemp -d "$TMP/chromium.XXXXXX")
	timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic \
		--no-first-run --disable-background-networking --disable-component-update \
		--disable-sync --user-data-dir="$prof" --hide-scrollbars \
		--force-device-scale-factor=1 --window-size=1280,2400 \
		--enable-logging=stderr --v=0 --screenshot="$1.png" --dump-dom \
		"file://$1" > "$1.dom" 2> "$1.log"
	_rc=$?
	rm -rf "$prof"
	[ $_rc = 0 ] && [ -s "$1.png" ] && [ -s "$1.dom" ]
}

# check PAGE NAME ARGS...: its checks, numbered on with the shell's
check() {
	_page=$1 _name=$2
	shift 2
	pychecks "$_page" "$_page.png" "$_page.dom" "$_page.log" --name "$_name" "$@" < "$CHECK"
}

ok "a synthetic 10-minute run on 8 GPUs: its page is written" -- \
	sh -c "'$SYNTH' '$TMP/long.html' 600 8 > '$TMP/long.stats'"
diag "$(cat "$TMP/long.stats")"
size=$(stat -c %s "$TMP/long.html")
ok "the 10-minute page is under 5 MB ($size bytes)" -- test "$size" -lt "$MAX_BYTES"
ok "Chromium renders it" -- shot "$TMP/long.html"
check "$TMP/long.html" "10-minute synthetic page" --synth

# the checks can fail: a script error, a strip drawn in the wrong colour
sed 's|^\tbuildSteps();$|\tbuildSteps(); no_such_function();|' "$TMP/long.html" > "$TMP/bad.html"
sed 's|busy: "#2e7d32"|busy: "#e53935"|' "$TMP/long.html" > "$TMP/recolour.html"
shot "$TMP/bad.html" && shot "$TMP/recolour.html"
PYTHONPATH=$IG_TOP/tests/lib python3 "$CHECK" "$TMP/bad.html" "$TMP/bad.html.png" \
	"$TMP/bad.html.dom" "$TMP/bad.html.log" --synth > "$TMP/bad.tap" 2>&1
ok "a page that logs to the console fails" -- grep -q '^not ok .*nothing on the console' "$TMP/bad.tap"
ok "a page whose script throws fails" -- grep -q '^not ok .*no script error' "$TMP/bad.tap"
PYTHONPATH=$IG_TOP/tests/lib python3 "$CHECK" "$TMP/recolour.html" "$TMP/recolour.html.png" \
	"$TMP/recolour.html.dom" "$TMP/recolour.html.log" --synth > "$TMP/recolour.tap" 2>&1
ok "a strip in the wrong colour fails the shares" -- grep -q "^not ok .*coloured shares" "$TMP/recolour.tap"

# a run with no GPU time: the page says so, with no error
ok "a page of no GPU time is written" -- sh -c "'$SYNTH' '$TMP/empty.html' 0 0 > /dev/null"
prof=$(mktemp -d "$TMP/chromium.XXXXXX")
timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
	--disable-background-networking --disable-component-update --disable-sync \
	--user-data-dir="$prof" --window-size=1280,1200 --enable-logging=stderr --v=0 \
	--dump-dom "file://$TMP/empty.html" > "$TMP/empty.dom" 2> "$TMP/empty.log"
ok "no GPU time: nothing on the console" -- sh -c "! grep -q ':CONSOLE' '$TMP/empty.log'"
ok "no GPU time: the script ran to the end, with no error" -- \
	grep -q '"errors":\[\],"strips":\[\],.*"drawn":true' "$TMP/empty.dom"
ok "no GPU time: the page says so" -- grep -q 'No GPU time was seen' "$TMP/empty.dom"

# usage
"$IG" check --html "$TMP/x.html" > /dev/null 2>&1
is "$?" 2 "--html with check: usage error"
"$IG" report --html - --json - "$TMP/none.igrec" > /dev/null 2>&1
is "$?" 2 "--html and --json both to standard output: usage error"

if [ "$(id -u)" != 0 ]; then
	skip "a storage job's page" "needs root"
	done_testing
	exit
fi
export LD_LIBRARY_PATH=$IG_TOP/build/simgpu
"$IG" run -q --json "$TMP/run.json" --html "$TMP/run.html" -o "$TMP/run.igrec" \
	-- "$IG_TOP/build/trainsim" -s storage -t 3 -q 2> "$TMP/run.err"
is "$?" 0 "idlegap run --html traces a storage job"
sed 's/^/# /' "$TMP/run.err"
diag "the run's page: $(stat -c %s "$TMP/run.html") bytes"
ok "Chromium renders the run's page" -- shot "$TMP/run.html"
check "$TMP/run.html" "the run's page" --report "$TMP/run.json"

# the strip zooms and pans through its own handlers: the page, opened as
# PAGE#ig-zoom-test, turns the wheel 5 times over the first strip, drags it
# 200 px right and double-clicks it, noting each view
prof=$(mktemp -d "$TMP/chromium.XXXXXX")
timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
	--disable-background-networking --disable-component-update --disable-sync \
	--user-data-dir="$prof" --window-size=1280,2400 --enable-logging=stderr --v=0 \
	--dump-dom "file://$TMP/run.html#ig-zoom-test" > "$TMP/zoom.dom" 2> "$TMP/zoom.log"
pychecks "$TMP/zoom.dom" "$TMP/zoom.log" <<'PY'
import html, json, re, sys
from tap import check
m = re.search(r'<pre id="ig-check"[^>]*>(.*?)</pre>', open(sys.argv[1]).read(), re.S)
c = json.loads(html.unescape(m.group(1))) if m else {}
z = c.get("zoom") or [[0, 1]] * 4
span = [b - a for a, b in z]
print("# views (s): %s" % z)
check(not [l for l in open(sys.argv[2]) if ":CONSOLE" in l] and c.get("errors") == [],
      "zooming: no console output, no script error", str(c.get("errors")))
check(span[1] < 0.5 * span[0], "the wheel zooms in (%.3f s of %.3f s)" % (span[1], span[0]))
check(z[2][0] < z[1][0] and abs(span[2] - span[1]) < 1e-6 * span[0],
      "a drag to the right shows earlier time, as wide")
check(z[3] == z[0], "a double click shows the whole run again")
PY

"$IG" report -q --json "$TMP/rep.json" --html "$TMP/rep.html" "$TMP/run.igrec" 2> "$TMP/rep.err"
is "$?" 0 "idlegap report --html replays the recording"
ok "Chromium renders the replay's page" -- shot "$TMP/rep.html"
check "$TMP/rep.html" "the replay's page" --report "$TMP/rep.json"

# 4 ranks on 4 GPUs, rank 2 starved by storage: the others wait for it,
# and each strip's peer wait is the report's
if [ -f "$IG_TOP/build/simgpu/libnccl.so.2" ]; then
	"$IG" run -q --json "$TMP/ranks.json" --html "$TMP/ranks.html" -- \
		"$IG_TOP/build/trainsim" ranks --world 4 -s storage --steps 60 > "$TMP/ranks.out" 2>&1
	is "$?" 0 "idlegap run --html traces 4 ranks"
	ok "Chromium renders the ranks' page" -- shot "$TMP/ranks.html"
	check "$TMP/ranks.html" "the ranks' page" --report "$TMP/ranks.json"
	ok "the ranks' page draws 4 GPUs" -- sh -c "grep -o '\"key\":[0-9]*' '$TMP/ranks.html.dom' | sort -u | wc -l | grep -qx 4"
else
	skip "4 ranks' page" "build/simgpu/libnccl.so.2 not built (make all)"
fi
done_testing
