#!/bin/sh
# check-exports.sh LIB HEADER - the shared library exports exactly the functions the public header declares: no internal helper, and none missing.
set -eu
lib=$1 header=$2
tmp=${TMPDIR:-/tmp}/skv-exports.$$
trap 'rm -f "$tmp".*' EXIT
# the names the version script makes global (scripts/exports.sh reads the header)
sh "$(dirname "$0")/exports.sh" "$header" | sed -n 's/^[[:space:]]*\(skv_[a-z0-9_]*\);$/\1/p' | sort -u > "$tmp.want"
nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBRVWi]$/ { sub(/@.*/, "", $3); print $3 }' | sort -u > "$tmp.got"
extra=$(comm -13 "$tmp.want" "$tmp.got" | tr '\n' ' ')
missing=$(comm -23 "$tmp.want" "$tmp.got" | tr '\n' ' ')
[ -z "$extra" ] || { echo "check-exports.sh: $lib exports what $header does not declare: $extra" >&2; exit 1; }
[ -z "$missing" ] || { echo "check-exports.sh: $lib lacks what $header declares: $missing" >&2; exit 1; }
echo "# exports: $(wc -l < "$tmp.got") functions, those of $header"
