#!/bin/sh
# exports.sh HEADER - the shared library's version script: the functions HEADER declares (each on a line that starts with its type and names skv_NAME), global; everything else, local.
set -eu
names=$(sed -n 's/^[a-z][^(]*[ *]\(skv_[a-z0-9_]*\)(.*/\1/p' "$1" | sort -u)
[ -n "$names" ] || { echo "exports.sh: no skv_ function declarations in $1" >&2; exit 1; }
echo "/* skv.map - written by scripts/exports.sh from $1: the public API's functions, nothing else. */"
echo "SKV_0 {"
echo "	global:"
for n in $names; do
	echo "		$n;"
done
echo "	local: *;"
echo "};"
