#!/usr/bin/env bash
# The README's test command: installs what the tests need, then runs every
# tier and says how long each part took.
#
#   deps      Debian's chromium, redis-server, Node.js >= 20 (.ci/deps) and the
#             Playwright driver through the project's own install path
#   lint      gofmt, go vet, go.mod/go.sum tidy
#   unit      go test -race -short ./... : no browser, no driver, no npm (a
#             tripwire fails any test that reaches them; internal/testtier)
#   browser   go test ./... without -short and without the race detector:
#             real Chromium through real MCP clients; pkg/server's tests run in
#             $SHARDS concurrent processes (each with one shared driver), the
#             other packages beside them
#   race      the concurrency and stress tests ($RACE_TESTS) again, with the
#             race detector
#   conformance  the official MCP conformance suite over Streamable HTTP
#
# Comparisons with @playwright/mcp read its recorded output (testdata/upstream);
# `go tool -modfile=tools.mod task upstream` re-records it from the real one.
# Env: SHARDS (default 3), GO_TEST_TIMEOUT (default 15m), SKIP_CONFORMANCE=1.
# Extra arguments go to every `go test` of the browser tier (e.g. -v).
set -euo pipefail
cd "$(dirname "$0")/.."

shards=${SHARDS:-3}
timeout=${GO_TEST_TIMEOUT:-15m}
server=./pkg/server
RACE_TESTS='Stress|Churn|Concurrent|Cancel|Flight'
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT

t0=$(date +%s)
timings=()
step() { # name, then the command
  local name=$1 s rc
  shift
  s=$(date +%s)
  echo "--- $name" >&2
  if "$@"; then rc=0; else rc=$?; fi
  timings+=("$(printf '%-12s %4ss  exit %s' "$name" $(($(date +%s) - s)) "$rc")")
  if [ "$rc" != 0 ]; then
    summary
    echo "FAIL: $name (exit $rc)" >&2
    exit "$rc"
  fi
}
summary() {
  echo "=== test.sh: $(($(date +%s) - t0))s in all" >&2
  printf '  %s\n' "${timings[@]}" >&2
}

deps() {
  bash .ci/deps
  go run ./cmd/cloakbrowser-mcp install --driver-only
}

lint() {
  local bad
  bad=$(gofmt -l .)
  if [ -n "$bad" ]; then
    printf '%s\n' "$bad"
    echo "gofmt: the files above need formatting" >&2
    return 1
  fi
  go vet ./...
  if ! d=$(go mod tidy -diff); then
    printf '%s\n' "$d"
    echo "go.mod/go.sum are not tidy: run go mod tidy" >&2
    return 1
  fi
}

unit() { go test -race -short -count=1 -timeout 5m ./...; }

# browser runs pkg/server's top-level tests in $shards processes (test i in
# shard i mod $shards) and the other packages in one more, all at once, and
# prints each log when all have ended.
browser() {
  local tests others pids=() names=() status=0 i
  mapfile -t tests < <(go test -list '.*' "$server" | grep -E '^(Test|Example)' | grep -Ev "^Test.*($RACE_TESTS)" | sort)
  if [ ${#tests[@]} -eq 0 ]; then
    echo "no tests listed in $server" >&2
    return 1
  fi
  others=$(go list ./... | grep -vx "github.com/cloakmcp/cloakbrowser-mcp/pkg/server")
  go test -count=1 -timeout "$timeout" -skip "^Test.*($RACE_TESTS)" "$@" $others >"$logs/others" 2>&1 &
  pids+=($!) names+=(others)
  for ((i = 0; i < shards; i++)); do
    local mine=() j
    for j in "${!tests[@]}"; do
      if ((j % shards == i)); then mine+=("${tests[$j]}"); fi
    done
    local IFS='|'
    go test -count=1 -timeout "$timeout" -run "^(${mine[*]})\$" "$@" "$server" >"$logs/server-$i" 2>&1 &
    unset IFS
    pids+=($!) names+=("server-$i")
  done
  for i in "${!pids[@]}"; do
    local rc=0
    wait "${pids[$i]}" || rc=$?
    echo "=== ${names[$i]} (exit $rc)"
    cat "$logs/${names[$i]}"
    if [ "$rc" != 0 ]; then status=1; fi
  done
  echo "browser tier: ${#tests[@]} top-level tests of $server in $shards shards, the other packages beside them"
  return $status
}

race() { go test -race -count=1 -timeout "$timeout" -run "^Test.*($RACE_TESTS)" "$@" ./...; }

conformance() {
  if [ "${SKIP_CONFORMANCE:-}" = 1 ]; then
    echo "conformance: skipped (SKIP_CONFORMANCE=1)"
    return 0
  fi
  bash scripts/conformance.sh
}

step deps deps
step lint lint
step unit unit
step browser browser "$@"
step race race "$@"
step conformance conformance
summary
