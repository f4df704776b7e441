#!/bin/sh
# run-tests.sh - run each cmocka test binary in TAP mode, naming each as it runs, and print one "N passed, N failed" line.
# A binary that dies before reporting every planned test counts its missing tests as failed.
set -u
pass=0
fail=0
skip=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for t in "$@"; do
	echo "# $t"
	CMOCKA_MESSAGE_OUTPUT=TAP "$t" >"$log" 2>&1
	rc=$?
	cat "$log"
	ok=$(grep -c '^ok ' "$log")
	# cmocka reports a skipped test as "not ok N - name # SKIP": not a failure
	sk=$(grep -c '^not ok .*# SKIP' "$log")
	nok=$(($(grep -c '^not ok ' "$log") - sk))
	plan=$(sed -n 's/^1\.\.\([0-9][0-9]*\).*/\1/p' "$log" | head -n 1)
	[ -n "$plan" ] || plan=$((ok + nok))
	lost=$((plan - ok - nok - sk))
	[ "$lost" -gt 0 ] && nok=$((nok + lost))
	if [ "$rc" -ne 0 ] && [ "$nok" -eq 0 ]; then
		echo "# $t exited with status $rc" ; nok=1
	fi
	pass=$((pass + ok))
	fail=$((fail + nok))
	skip=$((skip + sk))
done
if [ "$skip" -gt 0 ]; then
	echo "$pass passed, $fail failed ($skip skipped: see the # SKIP lines above)"
else
	echo "$pass passed, $fail failed"
fi
[ "$fail" -eq 0 ]
