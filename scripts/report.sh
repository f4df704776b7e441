#!/bin/sh
# report.sh - what `make report` runs: the default suite into reports/default, then its charts and REPORT.md.
# Usage: sh scripts/report.sh [OUT]  (OUT defaults to reports/default; run from the repository root).
set -u
out=${1:-reports/default}
skv=build/skv
suite=experiments/default.suite

if [ ! -x "$skv" ]; then
	echo "report.sh: $skv is missing; build it with: make" >&2
	exit 1
fi
# Checked before the suite runs, so a missing gnuplot costs no waiting.
if ! command -v gnuplot >/dev/null 2>&1; then
	echo "report.sh: gnuplot is needed for the charts; install it with: apt-get install gnuplot-nox (or: sh scripts/deps.sh)" >&2
	exit 1
fi

start=$(date +%s)
echo "report.sh: running $suite into $out" >&2
# skv prints one line per finished experiment, and a progress line while
# one runs when stderr is a terminal.
"$skv" suite "$suite" --out="$out" || exit $?
"$skv" report "$out" || exit $?
end=$(date +%s)
echo "report.sh: $out/REPORT.md written in $((end - start)) s" >&2
