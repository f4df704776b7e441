#!/bin/sh
# check-structure.sh - the code's shape rules: files of at most 600 lines, functions of at most 80, and layers that include only layers below them.
#
# Layers, bottom up: lib/ (the library: includes only its own headers),
# then the program's experiments/io, core, results, catalog, report, cli,
# mpi (skv-mpi, built when Open MPI is present);
# a file in a layer may include its own layer's headers and those of the
# layers below, never above (ARCHITECTURE.md). A function is counted from
# the line of its opening brace (in column 0, the style of every file) to
# its closing brace. Prints one line per violation as FILE:LINE: what, and
# exits 1 if there is any. lib/skv.h is exempt from the file length: it is
# the one public header, the library's whole contract in one place (as
# mpfr.h is MPFR's), and its sections are the files' index.
set -u
cd "$(dirname "$0")/.." || exit 2
max_file=600
max_fn=80
layers="io core results catalog report cli mpi"
rank() {
	i=1
	for l in $layers; do
		[ "$l" = "$1" ] && { echo "$i"; return; }
		i=$((i + 1))
	done
	echo 0
}
bad=0
files=$(ls lib/*.c lib/*.h experiments/*/*.c experiments/*/*.h 2>/dev/null)
for f in $files; do
	out=$(awk -v f="$f" -v mf="$max_file" -v mfn="$max_fn" '
		/^\{/ { start = FNR; name = prev }
		/^\}/ && start { n = FNR - start + 1
			if (n > mfn) printf "%s:%d: function %s is %d lines (at most %d)\n", f, start, name, n, mfn
			start = 0 }
		{ prev = $0 }
		END { if (FNR > mf && f != "lib/skv.h") printf "%s:%d: %d lines (at most %d)\n", f, FNR, FNR, mf }' "$f")
	[ -n "$out" ] && { echo "$out"; bad=1; }
	case "$f" in
	lib/*)
		inc=$(grep -n '^#include "[^"]*/' "$f")
		[ -n "$inc" ] && { echo "$inc" | sed "s|^|$f:|; s|\$| (lib/ includes only lib/ headers)|"; bad=1; }
		;;
	experiments/*)
		layer=$(echo "$f" | cut -d/ -f2)
		r=$(rank "$layer")
		[ "$r" -eq 0 ] && { echo "$f:1: not in a layer ($layers)"; bad=1; continue; }
		grep -n '^#include "[a-z_]*/' "$f" | while IFS= read -r line; do
			dep=$(echo "$line" | sed 's|^[0-9]*:#include "\([a-z_]*\)/.*|\1|')
			d=$(rank "$dep")
			if [ "$d" -eq 0 ] || [ "$d" -gt "$r" ]; then
				echo "$f:${line%%:*}: includes $dep/ from $layer/ (a layer includes only itself and those below: $layers)"
			fi
		done | { out=$(cat); [ -n "$out" ] && { echo "$out"; exit 1; }; exit 0; } || bad=1
		;;
	esac
done
[ "$bad" -eq 0 ] && echo "# structure: every file <= $max_file lines, every function <= $max_fn, includes by layer"
exit "$bad"
