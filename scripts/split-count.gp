# split-count.gp - error against a swept number (the split count, the block
# size): one line per curve at the median over trials, a dark band from the
# first to the third quartile and a light one from the smallest to the
# largest trial, and a dotted line at the floor of each output format, on
# log-log axes; one panel per value of the panel column (the LSE storage
# format for split-count, the LSE offset for lse-magnitude and systems, none
# for block-size).
# An x that holds 0 is drawn as equally spaced labelled categories.
#
# Redraw one chart by hand:
#   gnuplot -c scripts/split-count.gp DIR/split-count.csv DIR/split-count.png png
# The numbers come from DIR/.plot/split-count.gp, which `skv report DIR`
# writes from the CSV (see scripts/common.gp). Edit this file to change how
# the chart looks; rerun `skv report DIR` to change what it shows.

_slash(s, i) = i < 1 ? 0 : s[i:i] eq '/' ? i : _slash(s, i - 1)
array args[4] = [ARG0, ARG1, ARG2, ARG3]
nargs = ARGC
# ntrials is known only once the data file is loaded: the bands' legend
# entries are sized here for the longest count the trials parameter allows.
extra_key = 'light band: min-max of 1000000 trials'
nextra = 2
load ARG0[1:_slash(ARG0, strlen(ARG0))].'common.gp'

if (xcat) {
	@set_category_tics
	set xrange [0.5:ncat + 0.5]
} else {
	set logscale x 2
	set format x '%g'
	# a tick every factor 2 for a few values (block sizes 1 to 256), every
	# factor 4 for more (split counts 1 to 1024)
	set xtics 1, (nx <= 12 ? 2 : 4)
}
set logscale y 10
set format y '10^{%L}'
set yrange [ymin:ymax]

# Curves that coincide (fp32 and fp64 partials on the same fp32 floor) stay
# visible: each curve is drawn thinner than the one before, on top of it;
# the chart's note names those that lie on another. A dense sweep (every
# split count) gets small marks, so the jumps between neighbours show.
dense = nx > 24 ? 0.45 : 1.0
thick(si) = dense * 0.8 + dense * (0.7 + 1.2 * (nseries - si) / (nseries > 1 ? nseries - 1.0 : 1.0))
big(si) = dense * (pscale * 0.8 + pscale * 0.5 * (nseries - si) / (nseries > 1 ? nseries - 1.0 : 1.0))
band_q = ntrials > 3
do for [pi=1:npanel] {
	@panel_setup
	@floor_draw
	b0 = (pi - 1) * nseries
	plot for [si=1:nseries] $data index (b0 + si - 1) using 1:(floor_y($3)):(logy($4)) \
		with filledcurves lc color[si] fs transparent solid 0.12 noborder notitle, \
	     for [si=1:nseries] $data index (b0 + si - 1) using 1:(band_q ? floor_y($5) : NaN):(logy($6)) \
		with filledcurves lc color[si] fs transparent solid 0.3 noborder notitle, \
	     for [si=1:nseries] $data index (b0 + si - 1) using 1:(logy($2)) \
		with linespoints lc color[si] dt dash[si] lw thick(si) pt ptype(si) ps big(si) notitle
	@panel_done
}
@key_setup
plot for [si=1:nseries] NaN with linespoints lc color[si] dt dash[si] lw thick(si) pt ptype(si) ps big(si) title series[si], \
     $nan using 1:2:3 with filledcurves lc rgb '#666666' fs transparent solid 0.42 noborder \
	title (band_q ? sprintf('dark band: quartiles of %d trials', ntrials) : ''), \
     $nan using 1:2:3 with filledcurves lc rgb '#999999' fs transparent solid 0.15 noborder \
	title (ntrials > 1 ? sprintf('light band: min-max of %d trials', ntrials) : 'one trial: no band'), \
     NaN with lines dt 3 lw 1.5 lc rgb '#000000' title floor_entry
unset multiplot
