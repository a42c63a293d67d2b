#!/bin/sh
# /metrics under slow clients (docs/design.md §7.5): 100 connections from one
# address that each trickle a header line every 4 s.  A scrape from another
# address is answered all through the attack; the attacker's address holds
# at most 16 connections; and a connection that never finishes its request
# is closed by the whole-request deadline however busily it trickles.
. "$(dirname "$0")/lib.sh"
SERVE=$IG_TOP/build/tests/lib/metrics_serve
FIX=$IG_TOP/tests/fixtures/agent
[ -x "$SERVE" ] || skip_all "build it first: make test-progs"
python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.2", 0))' 2> /dev/null ||
	skip_all "cannot bind 127.0.0.2 (loopback is not 127.0.0.0/8 here)"

"$SERVE" --listen 127.0.0.1:0 --proc-root "$TMP/noproc" "$FIX/storage.json" > "$TMP/serve.out" 2>&1 &
SERVE_PID=$!
trap 'kill $SERVE_PID 2>/dev/null; rm -rf "$TMP"' EXIT
i=0
while ! grep -q '^listening' "$TMP/serve.out" && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
PORT=$(awk '/^listening/ { print $2 }' "$TMP/serve.out")
ok "metrics_serve listens (port ${PORT:-none})" -- [ -n "$PORT" ]

pychecks "${PORT:-0}" <<'PY'
import errno, socket, sys, time
from tap import check

port = int(sys.argv[1])
SLOW = 100

def scrape(src):
    """The status line and body of GET /metrics from address src."""
    s = socket.socket()
    s.settimeout(8)
    try:
        s.bind((src, 0))
        s.connect(("127.0.0.1", port))
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
        got = b""
        while True:
            b = s.recv(65536)
            if not b:
                break
            got += b
        return got.decode("utf-8", "replace")
    except OSError as e:
        return "error: %s" % e
    finally:
        s.close()

def closed(s):
    """Whether the server has ended this connection."""
    try:
        return s.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True

slow = []
for i in range(SLOW):
    s = socket.socket()
    s.bind(("127.0.0.2", 0))
    try:
        s.connect(("127.0.0.1", port))
        s.sendall(b"GET /metrics HTTP/1.1\r\n")
    except OSError:
        pass
    slow.append(s)

def trickle(n):
    for s in slow:
        try:
            s.sendall(b"X-Slow-%d: 1\r\n" % n)
        except OSError:
            pass

start = time.monotonic()
answers = []
held = []
lines = 0
# 16 s of attack: a header line from each slow client every 4 s, a scrape
# from another address between them
while time.monotonic() - start < 16:
    r = scrape("127.0.0.1")
    answers.append(r.split("\r\n", 1)[0] if r.startswith("HTTP/") else r[:80])
    answers[-1] = (answers[-1], "\nidlegap_windows_total 1\n" in r)
    time.sleep(1)
    held.append(sum(not closed(s) for s in slow))
    trickle(lines)
    lines += 1
    time.sleep(max(0, start + 4 * lines - time.monotonic()))

check(all(a[0].startswith("HTTP/1.1 200") and a[1] for a in answers),
      "every scrape during the attack was answered with the exposition (%d scrapes)" % len(answers),
      "answers: %r" % answers)
check(held[0] <= 16, "one address holds at most 16 connections (held %d of %d)" % (held[0], SLOW))
check(held[-1] == 0, "connections still trickling after 16 s were closed by the request deadline (left %d)" % held[-1],
      "held over time: %r" % held)
after = scrape("127.0.0.2")
check(after.startswith("HTTP/1.1 200"), "the attacker's address is answered again once its connections are gone",
      after[:80])
for s in slow:
    s.close()
PY
done_testing
