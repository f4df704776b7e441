# lse-magnitude.gp - error against the LSE magnitude: one line per LSE storage
# format (median over trials) in a band from the smallest to the largest
# trial; one panel per split count. The offsets include 0, which a log axis
# cannot place, so x is categorical: one equally spaced tick per swept
# offset, labelled with its value (the default sweep 0, 10, ..., 10000 is
# then one decade per tick after the first).
#
# Redraw one chart by hand:
#   gnuplot -c scripts/lse-magnitude.gp DIR/lse-magnitude.csv DIR/lse-magnitude.png png
# The numbers come from DIR/.plot/lse-magnitude.gp, which `skv report DIR`
# writes from the CSV (see scripts/common.gp). Edit this file to change how
# the chart looks; rerun `skv report DIR` to change what it shows.

_slash(s, i) = i < 1 ? 0 : s[i:i] eq '/' ? i : _slash(s, i - 1)
array args[4] = [ARG0, ARG1, ARG2, ARG3]
nargs = ARGC
# ntrials is known only once the data file is loaded: the band's legend
# entry is sized here for the longest count the trials parameter allows.
extra_key = 'band: min-max of 1000000 trials'
load ARG0[1:_slash(ARG0, strlen(ARG0))].'common.gp'

if (xcat) {
	@set_category_tics
	set xrange [0.5:ncat + 0.5]
} else {
	set logscale x 10
	set format x '%g'
}
set logscale y 10
set format y '10^{%L}'
set yrange [ymin:ymax]
set style fill transparent solid 0.18 noborder

# Curves that coincide (fp32 and fp64 partials on the same fp32 floor) stay
# visible: each curve is drawn thinner than the one before, on top of it.
thick(si) = 1.5 + 1.2 * (nseries - si) / (nseries > 1 ? nseries - 1.0 : 1.0)
big(si) = pscale * 0.8 + pscale * 0.5 * (nseries - si) / (nseries > 1 ? nseries - 1.0 : 1.0)
do for [pi=1:npanel] {
	@panel_setup
	b0 = (pi - 1) * nseries
	plot for [si=1:nseries] $data index (b0 + si - 1) using 1:(floor_y($3)):(logy($4)) \
		with filledcurves lc color[si] notitle, \
	     for [si=1:nseries] $data index (b0 + si - 1) using 1:(logy($2)) \
		with linespoints lc color[si] dt dash[si] lw thick(si) pt ptype(si) ps big(si) notitle
	@panel_done
}
@key_setup
plot for [si=1:nseries] NaN with linespoints lc color[si] dt dash[si] lw thick(si) pt ptype(si) ps big(si) title series[si], \
     $nan using 1:2:3 with filledcurves lc rgb '#999999' \
	title (ntrials > 1 ? sprintf('band: min-max of %d trials', ntrials) : 'one trial: no band')
unset multiplot
