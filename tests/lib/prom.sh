# Debian's Prometheus server on loopback for a test, with a temporary
# config and data directory under $TMP (source after tests/lib.sh):
#   prom_start TARGET...   scrape TARGETs (host:port) every second as job
#                          "idlegap" (and evaluate the rule files
#                          $PROM_RULES names, if any, every second);
#                          sets PROM_URL and PROM_PID; 1 when it
#                          is not ready within 60 s (its log is printed)
#   prom_query EXPR        the value of EXPR's first sample, or nothing
#   prom_labels EXPR LABEL the LABEL of EXPR's samples, one a line
#   prom_wait EXPR [S]     polls until EXPR has a sample (S seconds, 30)
#   prom_stop              TERM, then KILL after 10 s; waits for it
PROMETHEUS=${PROMETHEUS:-prometheus}

prom_free_port() {
	/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

prom_start() {
	_pd=$TMP/prom
	mkdir -p "$_pd/data"
	{
		echo "global: {scrape_interval: 1s, evaluation_interval: 1s}"
		[ -n "${PROM_RULES:-}" ] && echo "rule_files: [$PROM_RULES]"
		echo "scrape_configs:"
		echo "  - job_name: idlegap"
		echo "    static_configs:"
		echo "      - targets: [$(echo "$@" | sed 's/ /, /g')]"
	} > "$_pd/prometheus.yml"
	_pp=$(prom_free_port)
	PROM_URL=http://127.0.0.1:$_pp
	"$PROMETHEUS" --config.file="$_pd/prometheus.yml" --storage.tsdb.path="$_pd/data" \
		--web.listen-address=127.0.0.1:$_pp --log.level=warn \
		> "$_pd/log" 2>&1 &
	PROM_PID=$!
	_i=0
	while [ $_i -lt 600 ]; do
		curl -fs "$PROM_URL/-/ready" > /dev/null 2>&1 && return 0
		kill -0 "$PROM_PID" 2>/dev/null || break
		sleep 0.1
		_i=$((_i + 1))
	done
	sed 's/^/# prometheus: /' "$_pd/log"
	return 1
}

# prom_api EXPR PYTHON: PYTHON evaluated with r = the result list
prom_api() {
	curl -fsG "$PROM_URL/api/v1/query" --data-urlencode "query=$1" 2>/dev/null |
	/usr/bin/python3 -c 'import json,sys
try:
    r = json.load(sys.stdin)["data"]["result"]
except Exception:
    sys.exit(0)
exec(sys.argv[1])' "$2"
}

prom_query() {
	prom_api "$1" 'print(r[0]["value"][1] if r else "")'
}

prom_labels() {
	prom_api "$1" "print('\n'.join(sorted(s['metric'].get('$2', '') for s in r)))"
}

prom_wait() {
	_i=0
	while [ $_i -lt $((${2:-30} * 5)) ]; do
		[ -n "$(prom_query "$1")" ] && return 0
		sleep 0.2
		_i=$((_i + 1))
	done
	return 1
}

prom_stop() {
	[ -n "${PROM_PID:-}" ] || return 0
	kill "$PROM_PID" 2>/dev/null
	_i=0
	while kill -0 "$PROM_PID" 2>/dev/null && [ $_i -lt 100 ]; do
		sleep 0.1
		_i=$((_i + 1))
	done
	kill -9 "$PROM_PID" 2>/dev/null
	wait "$PROM_PID" 2>/dev/null
	PROM_PID=
}
