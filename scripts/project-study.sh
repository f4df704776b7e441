#!/bin/sh
# project-study.sh [--calibrate] [RANKS THREADS] - the wall time of the full study (scripts/study-suite.sh) on RANKS nodes of THREADS cores (default 64 x 32), projected from unit costs measured here; docs/distributed.md states the method.
#
# 1. Calibration (--calibrate; else the constants measured on the 2-core
#    x86-64 machine of docs/distributed.md): three runs of the study's
#    systems line on one thread, their CPU seconds (user + system) against
#    skv's estimate of each run split in two, problems and truths (T) and
#    kernel runs and rows (K): least squares for CPU = rT * T + rK * K.
# 2. Units: skv --estimate plans every unit type of the study (each preset
#    group's input format at each context, one trial and one LSE offset:
#    units of one type cost the same, the kernel part grows linearly with
#    the offsets) and prints T and K of one unit.
# 3. A unit on a rank of THREADS threads takes s/m + p/THREADS seconds:
#    s = rT*T, the draw and the one truth of a decode row, each serial on
#    one thread; p = rK*K*offsets, its kernel runs and rows, spread over
#    the threads; m = the units that share a chunk (256 MiB of instances,
#    at most THREADS units a batch), whose truths run side by side.
# 4. The units, the largest first, each to the rank that is free first
#    (skv-mpi's dynamic schedule): the makespan; with the total CPU time
#    and the lower bound (sum over ranks, or the largest unit).
# 5. The files: rank 0 (or skv merge) writes every row once, on one
#    thread, at the rate measured (rows per CPU second) by merging a shard.
set -eu
cd "$(dirname "$0")/.." || exit 2
rT=1.061
rK=1.392
wr=18600
if [ "${1:-}" = --calibrate ]; then
	shift
	S="--splits=1,2,4,8,16,32,64,128,256 --partial=fp16,bf16,fp32 --lse=fp16,bf16,fp32 --threads=1"
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	for c in "--preset=fa2 --ctx=262144 --splits=1 --lse-offset=0 --partial=fp32 --lse=fp32 --trials=2 --threads=1" \
		"--ctx=16384 $S --lse-offset=0,25,50,75 --trials=1" "--ctx=65536 $S --lse-offset=0 --trials=1"; do
		# shellcheck disable=SC2086
		est=$(build/skv run systems $c --estimate 2>&1 | sed -n 's/.*problems and truths \([0-9.e+-]*\) s, kernel runs and rows \([0-9.e+-]*\) s.*/\1 \2/p')
		rm -rf "$tmp/o"
		# shellcheck disable=SC2086
		cpu=$( { /usr/bin/time -f '%U %S' build/skv run systems $c --out="$tmp/o" 2>&1 >/dev/null; } | tail -1 | awk '{ print $1 + $2 }')
		echo "calibration: T $est K, measured $cpu s: systems $c"
		echo "$est $cpu" >>"$tmp/fit"
	done
	set -- "$@"
	fit=$(awk '{ tt += $1 * $1; tk += $1 * $2; kk += $2 * $2; ty += $1 * $3; ky += $2 * $3 }
		END { d = tt * kk - tk * tk; printf "%.4f %.4f", (ty * kk - tk * ky) / d, (tt * ky - tk * ty) / d }' "$tmp/fit")
	rT=${fit% *}
	rK=${fit#* }
	build/skv run split-count --ctx=64 --splits=1,2,4,8,16,32,64 --trials=300 --shard=1/1 --out="$tmp/sh" 2>/dev/null
	cpu=$( { /usr/bin/time -f '%U %S' build/skv merge "$tmp/m" "$tmp/sh" 2>&1 >/dev/null; } | tail -1 | awk '{ print $1 + $2 }')
	wr=$(awk -v c="$cpu" 'BEGIN { printf "%.0f", 33600 / c }')
	echo "calibration: merging a shard of 33600 rows took $cpu CPU seconds"
fi
ranks=${1:-64}
threads=${2:-32}
offsets=41
trials=1024
echo "constants: rT $rT, rK $rK (measured CPU seconds per estimated second), files $wr rows per second; $ranks ranks x $threads threads"
S="--splits=1,2,4,8,16,32,64,128,256 --partial=fp16,bf16,fp32 --lse=fp16,bf16,fp32 --lse-offset=0 --trials=1 --threads=1"
for g in fa2,fa3,flashinfer,xformers,sglang,flex tilelang,naive-fp16 exact-fp64; do
	for c in 1024 4096 16384 65536 262144 1048576; do
		# shellcheck disable=SC2086
		build/skv run systems --preset=$g --ctx=$c $S --estimate 2>&1 |
			sed -n "s/.*problems and truths \([0-9.e+-]*\) s, kernel runs and rows \([0-9.e+-]*\) s.*/$c $g \1 \2/p"
	done
done | awk -v rT="$rT" -v rK="$rK" -v R="$ranks" -v P="$threads" -v O="$offsets" -v N="$trials" -v W="$wr" '
	# instance bytes (measure.c): (1 + 2n) d doubles and d + 1 double-doubles, d = 128
	{ n = $1; s = rT * $3; p = rK * $4 * O; b = (1 + 2 * n) * 128 * 8 + 129 * 16
	  m = int(268435456 / b); m = m < 1 ? 1 : m > P ? P : m
	  t = s / m + p / P; cpu += N * (s + p); sum += N * t; big = t > big ? t : big; per[n] += N * t
	  rows += N * split($2, presets, ",") * 9 * O * 9 # presets x splits x offsets x cache formats
	  printf "ctx %7d %-38s unit: truth %8.2f s, kernels and rows %9.1f s; on a rank %8.2f s (chunk %d)\n", n, $2, s, p, t, m
	  u[k++] = t }
	END {
	  for (i = 1; i < k; i++) for (j = i; j > 0 && u[j - 1] < u[j]; j--) { x = u[j]; u[j] = u[j - 1]; u[j - 1] = x }
	  # largest first, each to the least loaded rank (ties: the lower one)
	  for (i = 0; i < k; i++) for (c = 0; c < N; c++) { j = 0; for (r = 1; r < R; r++) if (load[r] < load[j]) j = r; load[j] += u[i] }
	  for (r = 0; r < R; r++) mk = load[r] > mk ? load[r] : mk
	  lb = sum / R > big ? sum / R : big
	  nc = split("1024 4096 16384 65536 262144 1048576", cs, " ")
	  for (i = 1; i <= nc; i++) printf "  one job per context: ctx %7d, about %.2f h on %d ranks\n", cs[i], per[cs[i]] / R / 3600, R
	  printf "rows %.0f: writing the files on one thread %.2f h (one job per context: %.2f h each)\n", rows, rows / W / 3600, rows / W / 3600 / nc
	  printf "units %d, CPU %.0f core-hours; on %d x %d: lower bound %.2f h, largest-first schedule %.2f h\n", k * N, cpu / 3600, R, P, lb / 3600, mk / 3600 }'
