#!/usr/bin/env bash
# The README's test command: installs what the tests need, then runs both
# test tiers, and says how long each part took.
#
#   deps      Debian's chromium, redis-server, Node.js >= 20 (.ci/deps) and the
#             Playwright driver through the project's own install path
#   lint      gofmt, go vet, go.mod/go.sum tidy
#   unit      go test -race -short ./... : no browser, no driver, no npm (a
#             tripwire fails any test that reaches them; internal/testtier)
#   browser   go test -race ./... : real Chromium through real MCP clients;
#             pkg/server's tests run in $SHARDS concurrent processes (each with
#             one shared driver), the other packages beside them
#   conformance  the official MCP conformance suite over Streamable HTTP
#
# Everything is built once, with the race detector (vet too): a second,
# plain build of the whole graph costs more on a 2-core machine than the
# detector costs the browser tier, and the concurrency and stress tests need
# it anyway. deps (apt, npm) and the conformance suite's npm install run in
# the background while lint and the unit tier use the CPU.
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
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT

t0=$(date +%s)
# timed name cmd…: runs cmd, records how long it took, and returns its status.
timed() {
  local name=$1 s rc=0
  shift
  s=$(date +%s)
  echo "--- $name (at $((s - t0))s)" >&2
  "$@" || rc=$?
  printf '%-12s %4ss  (from %ss)  exit %s\n' "$name" $(($(date +%s) - s)) $((s - t0)) "$rc" >>"$logs/timings"
  return $rc
}
summary() {
  echo "=== test.sh: $(($(date +%s) - t0))s in all" >&2
  sed 's/^/  /' "$logs/timings" >&2 2>/dev/null || true
}
fail() {
  summary
  echo "FAIL: $1" >&2
  exit 1
}
# background name cmd…: timed, in the background, its output in $logs/name.
background() {
  local name=$1
  shift
  timed "$name" "$@" >"$logs/$name.out" 2>&1 &
  eval "pid_$name=$!"
}
# join name: waits for a background step and shows its output.
join() {
  local name=$1 pid rc=0
  pid=$(eval "echo \$pid_$name")
  wait "$pid" || rc=$?
  cat "$logs/$name.out"
  [ "$rc" = 0 ] || fail "$name (exit $rc)"
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
  go vet -race ./...
  if ! d=$(go mod tidy -diff); then
    printf '%s\n' "$d"
    echo "go.mod/go.sum are not tidy: run go mod tidy" >&2
    return 1
  fi
}

unit() { go test -race -short -count=1 -timeout 5m ./...; }

# weight is a test's wall time in seconds in the browser tier on a busy
# 2-core machine (go test -race -v, clean caches), for spreading pkg/server's
# tests over the shards: heaviest first, each to the least loaded shard.
# Unlisted: 4. Refresh it from a `bash scripts/test.sh -v` log when tests
# change much.
declare -A weight=(
  [TestBadInputMegabyteArguments]=224 [TestHTTPSessionChurnWithBrowsers]=79 [TestSnapshotModes]=69
  [TestStressPopupsDialogsTabs]=60 [TestHostilePagesDoNotStall]=52
  [TestHTTPSessionChurnWithBrowsersIsolated]=28 [TestSnapshotContent]=27 [TestDropinIdleTimeout]=22
  [TestCodegenMatchesUpstream]=20 [TestImageResponses]=16 [TestFileToolsConfined]=15
  [TestMCPLoggingAndProgress]=13 [TestCDPFilePolicy]=12 [TestCancelHTTP]=12 [TestPoolSpreadAndFailover]=11
  [TestResourcesStdio]=11 [TestEveryCoreTool]=10 [TestCancelStdio]=10 [TestCDPHTTPSessions]=10
  [TestBadInputConfigFileType]=10 [TestFamilies]=10 [TestActionResponsesShowEveryChange]=9
  [TestCodegenLanguages]=9 [TestDropinFilePaths]=9 [TestPoolLoadFleetWide]=9 [TestBadInputShortErrors]=9
  [TestResourcesPerSessionHTTP]=8 [TestSnapshotMatchesUpstream]=8
)

# browser runs pkg/server's top-level tests in $shards processes and the
# other packages in one more, all at once, and prints each log when all
# have ended.
browser() {
  local tests others pids=() names=() status=0 i t
  mapfile -t tests < <(go test -list '.*' "$server" | grep -E '^(Test|Example)' |
    while read -r t; do echo "${weight[$t]:-4} $t"; done | sort -rn | cut -d' ' -f2)
  if [ ${#tests[@]} -eq 0 ]; then
    echo "no tests listed in $server" >&2
    return 1
  fi
  local load=() lists=()
  for ((i = 0; i < shards; i++)); do load+=(0) lists+=(""); done
  for t in "${tests[@]}"; do
    local min=0
    for ((i = 1; i < shards; i++)); do if ((load[i] < load[min])); then min=$i; fi; done
    load[min]=$((load[min] + ${weight[$t]:-4}))
    lists[min]+="${lists[min]:+|}$t"
  done
  others=$(go list ./... | grep -vx "github.com/cloakmcp/cloakbrowser-mcp/pkg/server")
  go test -race -count=1 -timeout "$timeout" "$@" $others >"$logs/others" 2>&1 &
  pids+=($!) names+=(others)
  for ((i = 0; i < shards; i++)); do
    go test -race -count=1 -timeout "$timeout" -run "^(${lists[i]})\$" "$@" "$server" >"$logs/server-$i" 2>&1 &
    pids+=($!) names+=("server-$i")
  done
  for i in "${!pids[@]}"; do
    local rc=0
    wait "${pids[$i]}" || rc=$?
    echo "=== ${names[$i]} (exit $rc)"
    cat "$logs/${names[$i]}"
    if [ "$rc" != 0 ]; then status=1; fi
  done
  echo "browser tier: ${#tests[@]} top-level tests of $server in $shards shards (estimated ${load[*]} s), the other packages beside them"
  return $status
}

conformance_install() {
  if [ "${SKIP_CONFORMANCE:-}" = 1 ]; then return 0; fi
  bash scripts/conformance.sh --install-only
}

conformance() {
  if [ "${SKIP_CONFORMANCE:-}" = 1 ]; then
    echo "conformance: skipped (SKIP_CONFORMANCE=1)"
    return 0
  fi
  bash scripts/conformance.sh
}

# What the tests need comes over the network and the disk (apt, npm) while
# the CPU builds and runs what needs only Go: lint and the unit tier.
background deps deps
background conformance_install conformance_install
timed lint lint || fail lint
timed unit unit || fail unit
join deps
timed browser browser "$@" || fail browser
join conformance_install
timed conformance conformance || fail conformance
summary
