#!/usr/bin/env bash
# Runs every test with the race detector. pkg/server holds most of the
# suite's wall time, and most of its tests wait on a browser or a timer
# rather than on a CPU, so its top-level tests run as two concurrent
# `go test` processes (every test in exactly one of them) next to the other
# packages. Extra arguments go to every `go test` (e.g. -v).
set -euo pipefail
cd "$(dirname "$0")/.."

timeout=${GO_TEST_TIMEOUT:-25m}
server=./pkg/server
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT

mapfile -t tests < <(go test -list '.*' "$server" | grep -E '^(Test|Example)' | sort)
if [ ${#tests[@]} -eq 0 ]; then
  echo "no tests listed in $server" >&2
  exit 1
fi
shard0=() shard1=()
for i in "${!tests[@]}"; do
  if (( i % 2 == 0 )); then shard0+=("${tests[$i]}"); else shard1+=("${tests[$i]}"); fi
done
join() { local IFS='|'; echo "^($*)\$"; }

others=$(go list ./... | grep -vx "github.com/cloakmcp/cloakbrowser-mcp/pkg/server")

start=$(date +%s)
go test -race -count=1 -p 1 -timeout "$timeout" "$@" $others >"$logs/others" 2>&1 & p0=$!
go test -race -count=1 -timeout "$timeout" "$@" -run "$(join "${shard0[@]}")" "$server" >"$logs/server-0" 2>&1 & p1=$!
go test -race -count=1 -timeout "$timeout" "$@" -run "$(join "${shard1[@]}")" "$server" >"$logs/server-1" 2>&1 & p2=$!

status=0
for job in "others:$p0" "server-0:$p1" "server-1:$p2"; do
  name=${job%%:*} pid=${job##*:}
  if wait "$pid"; then rc=0; else rc=$?; fi
  echo "=== $name (exit $rc)"
  cat "$logs/$name"
  if [ "$rc" != 0 ]; then status=1; fi
done
echo "tests: ${#tests[@]} top-level tests in $server in two shards; wall time $(( $(date +%s) - start ))s; exit $status"
exit $status
