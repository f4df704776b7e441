#!/bin/sh
# report.sh - what `make report` runs: the default suite and its report, built aside and swapped into reports/default whole.
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
# --report: skv runs every experiment and draws the report in a staging
# folder beside $out, then exchanges it with $out in one rename. An
# interrupted or failed run leaves $out exactly as it was (the staging
# folder is removed; after a SIGKILL, by the next run into $out). skv prints
# one line per finished experiment, and a progress line while one runs when
# stderr is a terminal.
"$skv" suite "$suite" --out="$out" --report || exit $?
end=$(date +%s)
echo "report.sh: $out/REPORT.md written in $((end - start)) s" >&2
