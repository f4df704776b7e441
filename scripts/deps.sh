#!/bin/sh
# deps.sh - make sure skv's build, test, fuzz and report dependencies are installed (Debian 12).
# Installs them with apt-get when run as root; otherwise prints the command and fails.
set -u
PKGS="libmpfr-dev libgmp-dev libcmocka-dev gnuplot-nox clang libomp-dev libclang-rt-14-dev python3-numpy pkg-config groff-base binutils"
# Optional: Open MPI, for build/skv-mpi (the Makefile builds it, and make
# check tests it, only when mpicc is found); installed along when root.
OPT_PKGS="libopenmpi-dev openmpi-bin"

missing=""
have_header() {
	for d in /usr/include /usr/local/include /usr/include/x86_64-linux-gnu /usr/include/aarch64-linux-gnu; do
		[ -f "$d/$1" ] && return 0
	done
	return 1
}
# clang with OpenMP and libFuzzer (make fuzz): a one-line program tells.
fuzzer_ok() {
	command -v clang >/dev/null 2>&1 || return 1
	t=$(mktemp -d) || return 1
	printf '#include <omp.h>\n#include <stddef.h>\n#include <stdint.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return omp_get_max_threads() < 0; }\n' >"$t/f.c"
	clang -fopenmp -fsanitize=fuzzer,address,undefined "$t/f.c" -o "$t/f" >/dev/null 2>&1
	rc=$?
	rm -rf "$t"
	return $rc
}
have_header mpfr.h   || missing="$missing libmpfr-dev"
have_header gmp.h    || missing="$missing libgmp-dev"
have_header cmocka.h || missing="$missing libcmocka-dev"
command -v gnuplot >/dev/null 2>&1 || missing="$missing gnuplot-nox"
fuzzer_ok || missing="$missing clang libomp-dev libclang-rt-14-dev"
# numpy for the tests that read files numpy itself wrote (Debian's python3)
/usr/bin/python3 -c 'import numpy' >/dev/null 2>&1 || missing="$missing python3-numpy"
# make install's test: pkg-config builds the README example, groff renders the man page
command -v pkg-config >/dev/null 2>&1 || missing="$missing pkg-config"
command -v groff >/dev/null 2>&1 || missing="$missing groff-base"
command -v readelf >/dev/null 2>&1 || missing="$missing binutils"
optional=""
{ command -v mpicc >/dev/null 2>&1 && command -v mpirun >/dev/null 2>&1; } || optional=" $OPT_PKGS"
if [ -z "$missing" ] && [ -n "$optional" ]; then
	if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
		echo "skv: note: no Open MPI (mpicc, mpirun): build/skv-mpi is not built; install$optional for it" >&2
		exit 0
	fi
	echo "skv: installing$optional with apt-get (for build/skv-mpi)" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >&2 && apt-get install -y -qq $optional >&2 ||
		echo "skv: note: apt-get could not install$optional: build/skv-mpi is not built" >&2
	exit 0
fi
[ -z "$missing" ] && exit 0
missing="$missing$optional"

cmd="apt-get update && apt-get install -y$missing"
if [ "$(id -u)" -ne 0 ]; then
	echo "skv: missing dependencies:$missing" >&2
	echo "skv: install them with: sudo sh -c '$cmd'" >&2
	exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
	echo "skv: missing dependencies:$missing and no apt-get here; install the equivalents of: $PKGS" >&2
	exit 1
fi
echo "skv: installing$missing with apt-get" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2 && apt-get install -y -qq $missing >&2 || {
	echo "skv: apt-get failed; run: $cmd" >&2
	exit 1
}
