#!/bin/sh
# run-tests.sh - run each cmocka test binary in TAP mode and print one "N passed, N failed" line.
# A binary that dies before reporting every planned test counts its missing tests as failed.
set -u
pass=0
fail=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for t in "$@"; do
	CMOCKA_MESSAGE_OUTPUT=TAP "$t" >"$log" 2>&1
	rc=$?
	cat "$log"
	ok=$(grep -c '^ok ' "$log")
	nok=$(grep -c '^not ok ' "$log")
	plan=$(sed -n 's/^1\.\.\([0-9][0-9]*\).*/\1/p' "$log" | head -n 1)
	[ -n "$plan" ] || plan=$((ok + nok))
	lost=$((plan - ok - nok))
	[ "$lost" -gt 0 ] && nok=$((nok + lost))
	if [ "$rc" -ne 0 ] && [ "$nok" -eq 0 ]; then
		echo "# $t exited with status $rc" ; nok=1
	fi
	pass=$((pass + ok))
	fail=$((fail + nok))
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
