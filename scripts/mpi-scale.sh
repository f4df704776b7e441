#!/bin/sh
# mpi-scale.sh [SUITE] [RANKS...] - skv-mpi's wall time on 1 and 2 (or the given) ranks of one OpenMP thread each, in one run, with each run's load balance; the outputs checked byte for byte against the first.
set -eu
cd "$(dirname "$0")/.." || exit 2
suite=${1:-docs/scale.suite}
[ $# -gt 0 ] && shift
ranks=${*:-1 2}
[ -x build/skv-mpi ] || { echo "mpi-scale: build/skv-mpi is not built (Open MPI's mpicc: scripts/deps.sh)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# /proc/stat's cpu line: user nice system idle iowait irq softirq steal (ticks)
ticks() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8, $5 + $6, $9 }' /proc/stat; }
first=""
for n in $ranks; do
	s0=$(ticks)
	t0=$(date +%s.%N)
	mpirun --allow-run-as-root --oversubscribe --bind-to none -np "$n" build/skv-mpi suite "$suite" \
		--threads=1 --out="$tmp/np$n" 2>"$tmp/np$n.err" || { cat "$tmp/np$n.err" >&2; exit 1; }
	t1=$(date +%s.%N)
	wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
	s1=$(ticks)
	echo "ranks $n: wall $wall s (mpirun start to end)"
	echo "$s0 $s1 $(getconf _NPROCESSORS_ONLN)" | awk '{ b = $4 - $1; i = $5 - $2; s = $6 - $3; t = b + i + s
		printf "  this machine'"'"'s %d CPUs meanwhile: %.0f%% busy (every process), %.0f%% idle, %.0f%% stolen by the host\n", $7, 100 * b / t, 100 * i / t, 100 * s / t }'
	grep '^skv-mpi: .* load balance' "$tmp/np$n.err" | sed 's/^/  /'
	if [ -z "$first" ]; then
		first=$n
		w1=$wall
	else
		echo "  ratio wall(ranks $first) / wall(ranks $n): $(awk -v a="$w1" -v b="$wall" 'BEGIN { printf "%.2f", a / b }')"
		for f in "$tmp/np$first"/*.csv "$tmp/np$first"/*.md; do
			cmp -s "$f" "$tmp/np$n/${f##*/}" || { echo "mpi-scale: ${f##*/} differs between $first and $n ranks" >&2; exit 1; }
		done
		echo "  the CSV and .md files are byte-identical to those of $first rank(s)"
	fi
done
