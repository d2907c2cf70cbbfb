#!/usr/bin/env bash
# `make explore-cluster`: explore across machines on a real batch engine, on this machine. A one-node Slurm
# (slurm-one-node.sh) runs explore-array.sbatch as an array of SHARDS tasks; their results merged must be, byte for
# byte, the report one machine prints for the same seeds — in text and in --json — or this fails.
#
#   Config/cluster/explore-on-slurm.sh SHIELDBUS CONFIG DAYS SEED SHARDS
set -euo pipefail
[ $# = 5 ] || { echo "usage: $0 SHIELDBUS CONFIG DAYS SEED SHARDS" >&2; exit 2; }
root=$(cd "$(dirname "$0")/../.." && pwd)
shieldbus=$(realpath "$1") config=$2 days=$3 seed=$4 shards=$5
deadline=${CLUSTER_DEADLINE:-1800}
cd "$root"
[ -x "$shieldbus" ] || { echo "explore-cluster: no shieldbus at $1 (build it first)" >&2; exit 2; }

work=$(mktemp -d /tmp/shieldbus-explore-cluster.XXXXXX)
cluster=$work/slurm
proved=false
# The daemons stop whatever happened; the folder goes when the proof held, and stays (its logs) when it did not.
finish() {
	"$root/Config/cluster/slurm-one-node.sh" stop "$cluster" || true
	if $proved; then rm -rf "$work"; else echo "explore-cluster: FAILED; the logs, results and reports are in $work" >&2; fi
}
trap finish EXIT
"$root/Config/cluster/slurm-one-node.sh" start "$cluster"
export SLURM_CONF=$cluster/slurm.conf

# The same options everywhere: the configuration's path and the failures folder are in the report.
options=(--failures-dir "$work/failures")
echo "explore-cluster: $shards Slurm array tasks of $config, $days day(s) from seed $seed (in $work, kept if this fails)"
status=0
timeout "$deadline" sbatch --wait --quiet --array=0-$((shards - 1)) --cpus-per-task=1 --chdir="$root" \
	--output="$work/task-%a.log" \
	--export=ALL,SHIELDBUS="$shieldbus",EXPLORE_CONFIG="$config",EXPLORE_DAYS="$days",EXPLORE_SEED="$seed",EXPLORE_RESULTS="$work/results" \
	"$root/Config/cluster/explore-array.sbatch" "${options[@]}" || status=$?
if [ "$status" != 0 ]; then
	echo "explore-cluster: the array did not finish cleanly (sbatch status $status; 124: not within ${deadline}s)" >&2
	tail -n 5 "$work"/task-*.log >&2 || true
	scancel --name=shieldbus-explore 2>/dev/null || true
	exit 1
fi
# Each task says which shard it played and where it took it from.
for log in "$work"/task-*.log; do grep -h "^shard " "$log"; done
for index in $(seq 0 $((shards - 1))); do
	grep -q "\"source\":\"SLURM_ARRAY_TASK_ID=$index of SLURM_ARRAY_TASK_COUNT=$shards" "$work/results/shard-$index.json" \
		|| { echo "explore-cluster: shard-$index.json was not played as Slurm's task $index of $shards" >&2; exit 1; }
done

merge() { "$shieldbus" explore merge "$@" 2>>"$work/merge.err" || [ $? = 3 ]; }
one() { env -u SLURM_CONF "$shieldbus" explore --config "$config" --days "$days" --seed "$seed" --profile both "${options[@]}" "$@" \
	2>>"$work/one-machine.err" || [ $? = 3 ]; }
merge "$work"/results/shard-*.json > "$work/merged.txt"
merge --json "$work"/results/shard-*.json > "$work/merged.jsonl"
echo "explore-cluster: the same seeds on one machine"
one > "$work/one-machine.txt"
one --json > "$work/one-machine.jsonl"
differ() {
	diff "$1" "$2" | head -20
	# The bus's ack-timeout is a wall-time bound: on a machine loaded enough to reach it, a day (or a shrinker's
	# candidate) is degraded, and its journal is not the seed's alone (docs/explore.md, "Found, and left for others").
	if grep -q "ack-timeout" "$1" "$2"; then
		echo "explore-cluster: a run was degraded by ack-timeout (a wall-time bound) on this loaded machine; play it again on a quieter one" >&2
	fi
	exit 1
}
cmp "$work/merged.txt" "$work/one-machine.txt" || differ "$work/merged.txt" "$work/one-machine.txt"
cmp "$work/merged.jsonl" "$work/one-machine.jsonl" || differ "$work/merged.jsonl" "$work/one-machine.jsonl"
cat "$work/merged.txt"
proved=true
echo "explore-cluster: the $shards shards merged are one machine's report byte for byte ($(wc -c < "$work/merged.txt") bytes of text, $(wc -l < "$work/merged.jsonl") JSON lines)"
