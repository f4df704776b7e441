#!/bin/sh
# fuzz.sh - run each libFuzzer target for SECONDS on a scratch copy of its seed corpus; stop at the first finding.
# Usage: sh scripts/fuzz.sh SECONDS build-fuzz/fuzz_NAME...   (what `make fuzz` runs)
set -u
secs=$1
shift
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM
status=0
for t in "$@"; do
	name=$(basename "$t")
	seeds=tests/fuzz/corpus/$name
	corpus=$work/$name
	mkdir -p "$corpus"
	# the committed seeds stay as they are: new inputs go to the scratch copy
	[ -d "$seeds" ] && cp "$seeds"/* "$corpus"/ 2>/dev/null
	dict=
	[ -f "tests/fuzz/$name.dict" ] && dict=-dict=tests/fuzz/$name.dict
	echo "fuzz.sh: $name for $secs s" >&2
	if ! "$t" -max_total_time="$secs" -timeout=20 -rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$work/$name-" $dict "$corpus" >"$work/$name.log" 2>&1; then
		tail -n 40 "$work/$name.log" >&2
		for a in "$work/$name"-*; do
			[ -f "$a" ] && cp "$a" "./$(basename "$a")" && echo "fuzz.sh: $name found a failing input: ./$(basename "$a")" >&2
		done
		status=1
		continue
	fi
	grep -E '^stat::number_of_executed_units|^#[0-9]+.*DONE' "$work/$name.log" | tail -n 2 >&2
done
[ $status -eq 0 ] && echo "fuzz.sh: $# targets, $secs s each, no finding" >&2
exit $status
