# generic.gp - the chart of an experiment `skv report` has no chart of its
# own for: one bar per parameter point at the median error over the trials,
# an error bar from the smallest to the largest trial, on a log axis; the
# tick under each bar names the point's varying parameters.
#
# Redraw one chart by hand:
#   gnuplot -c scripts/generic.gp DIR/EXPERIMENT.csv DIR/EXPERIMENT.png png
# The numbers come from DIR/.plot/EXPERIMENT.gp, which `skv report DIR`
# writes from the CSV (see scripts/common.gp). Edit this file to change how
# the chart looks; rerun `skv report DIR` to change what it shows.

_slash(s, i) = i < 1 ? 0 : s[i:i] eq '/' ? i : _slash(s, i - 1)
array args[4] = [ARG0, ARG1, ARG2, ARG3]
nargs = ARGC
extra_key = 'bar and dot: median, error bar: min-max'
tick_angle = 35
load ARG0[1:_slash(ARG0, strlen(ARG0))].'common.gp'

@set_category_tics
tick_font = ncat > 24 ? ',9' : ',11'
if (tick_angle) {
	set xtics rotate by tick_angle right noenhanced font tick_font
} else {
	set xtics noenhanced font tick_font
}
set xrange [0.5:ncat + 0.5]
set grid noxtics
set logscale y 10
set format y '10^{%L}'
# A decade of room under the smallest bar, so a bar near the floor still shows.
set yrange [ymin / 10.0:ymax]
bw = 0.8 / nseries
xpos(x, si) = x + (si - (nseries + 1) / 2.0) * bw
set boxwidth bw * 0.85 absolute

do for [pi=1:npanel] {
	@panel_setup
	@floor_draw
	b0 = (pi - 1) * nseries
	plot for [si=1:nseries] $data index (b0 + si - 1) using (xpos($1, si)):(logy($2)) \
		with boxes lc color[si] fs solid 0.6 border notitle, \
	     for [si=1:nseries] $data index (b0 + si - 1) using (xpos($1, si)):(logy($2)):(floor_y($3)):(logy($4)) \
		with yerrorbars lc rgb '#000000' lw 1.5 pt 7 ps 0.5 * pscale notitle
	@panel_done
}
@key_setup
plot for [si=1:nseries] $nan using 1:2 with boxes lc color[si] fs solid 0.6 border title series[si], \
     $nan using 1:2:3:4 with yerrorbars lc rgb '#000000' lw 1.5 pt 7 ps 0.5 * pscale title extra_key, \
     NaN with lines dt 3 lw 1.5 lc rgb '#000000' title floor_entry
unset multiplot
