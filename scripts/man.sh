#!/bin/sh
# man.sh SKV - writes the skv(1) manual page on stdout from the program's own --help texts, so the page and the help never disagree.
set -eu
skv=$1
version=$("$skv" --version | sed 's/^skv //')
# troff: backslashes doubled, a line starting with . or ' protected by \&.
esc() { sed -e 's/\\/\\e/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"; }
section() {
	printf '.SH %s\n.nf\n' "$1"
	shift
	"$skv" "$@" 2>&1 | esc
	printf '.fi\n'
}
cat <<HEAD
.TH SKV 1 "" "skv $version" "User Commands"
.SH NAME
skv \\- precision study harness for the split-KV (flash-decoding) attention merge
.SH SYNOPSIS
.B skv
.I COMMAND
[\\fIARGS\\fR]
.SH DESCRIPTION
skv emulates every number format a decode kernel stores and computes in, bit for bit, against
an exact ground truth, and measures what the split count, the LSE magnitude, the reduction
order, the formats and the production presets cost. Each section below is the program's own
help text for one command.
HEAD
section "COMMANDS" --help
section "SKV RUN" run --help
section "SKV RECOMMEND" recommend --help
section "SKV REPORT" report --help
section "SKV MMA" mma --help
cat <<TAIL
.SH FILES
.TP
.I PREFIX/share/skv/
the gnuplot chart scripts \\fBskv report\\fR draws with (\\fBSKV_SCRIPTS\\fR overrides)
.SH ENVIRONMENT
.TP
.B SKV_SCRIPTS
the folder of the chart scripts
.TP
.B OMP_NUM_THREADS
the default thread count (\\-\\-threads overrides); results never depend on it
.SH SEE ALSO
.BR gnuplot (1),
the library's header
.IR skv.h ,
README.md and ARCHITECTURE.md in the source tree.
TAIL
