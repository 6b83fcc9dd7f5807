#!/usr/bin/env bash
# Runs the whole fault suite (make chaos) in three lanes at once, each a
# list of go test runs with its own control planes: the 25-minute churn
# soak alone, and the other runs split so that each lane ends near the
# soak. The lanes mostly wait (outages, churn at a fixed rate, leases), so
# they share two cores well. Every run's output goes to one log, with the
# date, the commit and each run's time and verdict, and the script fails
# when any run failed.
#
#   hack/chaos.sh [LOG]     (default: bench/results/chaos-<date>.log)
set -u
cd "$(dirname "$0")/.."
GO=${GO:-go}
log=${1:-bench/results/chaos-$(date -u +%F).log}
mkdir -p "$(dirname "$log")"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The runs, by lane: "name;packages;go test flags".
lane1=(
	"soak;./test/chaos/;-run ^TestChurnSoak$ -timeout 40m"
)
lane2=(
	"runtime;./pkg/runtime/;-timeout 20m -run ${CHAOS_TESTS}"
	"testenv;./pkg/testenv/;-timeout 10m -run TestStopAndRestartServers"
	"webhook;./pkg/webhook/;-timeout 10m -run ${WEBHOOK_CHAOS_TESTS}"
	"examples;./examples/todo-operator/ ./examples/hello-operator/;-timeout 10m -run ${EXAMPLE_CHAOS_TESTS}"
	"fleet;./pkg/runtime/fleet/;-timeout 10m -run TestFleet|TestSpreadOverReplicas|TestChildrenAcrossClusters|TestMainRunsAgainAfterALostLease|TestNamespacesAndMulti"
)
lane3=(
	"faults;./test/chaos/;-skip ^TestChurnSoak$ -timeout 40m"
	"compaction;./test/chaos/compaction/;-timeout 20m"
)

run_lane() {
	local lane=$1
	shift
	for entry in "$@"; do
		IFS=';' read -r name pkgs flags <<<"$entry"
		local start end rc
		start=$(date +%s)
		echo "lane $lane: $name: go test $pkgs $flags" >&2
		# shellcheck disable=SC2086 # the flags and packages are words
		OPGEN_CHAOS=full $GO test -count=1 -v $flags $pkgs >"$work/$name.out" 2>&1
		rc=$?
		end=$(date +%s)
		echo "$name $rc $((end - start))" >>"$work/results"
		echo "lane $lane: $name: $([ $rc = 0 ] && echo passed || echo FAILED) in $((end - start)) s" >&2
	done
}

: "${CHAOS_TESTS:?make chaos sets it}" "${WEBHOOK_CHAOS_TESTS:?}" "${EXAMPLE_CHAOS_TESTS:?}"
begin=$(date +%s)
run_lane 1 "${lane1[@]}" &
run_lane 2 "${lane2[@]}" &
run_lane 3 "${lane3[@]}" &
wait
total=$(($(date +%s) - begin))

failed=0
{
	echo "# make chaos, $(date -u +'%F %H:%M UTC'), commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . || echo ' (with uncommitted changes)')"
	echo "# $(nproc) cores, $(uname -sr), $($GO version | cut -d' ' -f3)"
	echo "#"
	echo "# run         verdict  seconds"
	while read -r name rc secs; do
		verdict=passed
		[ "$rc" = 0 ] || { verdict=FAILED; failed=1; }
		printf '# %-11s %-8s %s\n' "$name" "$verdict" "$secs"
	done <"$work/results"
	echo "# whole run: $total s ($((total / 60)) min $((total % 60)) s)"
	for f in "$work"/*.out; do
		echo
		echo "=== $(basename "$f" .out)"
		cat "$f"
	done
} >"$log"
grep '^# ' "$log" | head -20
echo "log: $log"
exit $failed
