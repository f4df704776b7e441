# merge-rule.gp - LSE-weighted merges against the plain mean and sum: per
# category (x: the merge rule, or the split layout for uneven-splits) and
# series (colour), a bar at the median error over the trials and an error
# bar from the smallest to the largest trial, on a log axis, and a dotted
# line at the floor of each output format; one panel per value of the panel
# column (the split count for uneven-splits).
#
# Redraw one chart by hand:
#   gnuplot -c scripts/merge-rule.gp DIR/merge-rule.csv DIR/merge-rule.png png
# The numbers come from DIR/.plot/merge-rule.gp, which `skv report DIR`
# writes from the CSV (see scripts/common.gp). Edit this file to change how
# the chart looks; rerun `skv report DIR` to change what it shows.

_slash(s, i) = i < 1 ? 0 : s[i:i] eq '/' ? i : _slash(s, i - 1)
array args[4] = [ARG0, ARG1, ARG2, ARG3]
nargs = ARGC
extra_key = 'bar and dot: median, error bar: min-max'
tick_angle = 30
load ARG0[1:_slash(ARG0, strlen(ARG0))].'common.gp'

@set_category_tics
if (tick_angle) {
	set xtics rotate by tick_angle right noenhanced
} else {
	set xtics noenhanced
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
set errorbars 1.5

# The series' first key is its colour; its second key (dash[]) is the fill:
# solid for the first value, hatching at a new angle for each other value.
hatch(k) = k + 2
# A bar the log axis cannot draw says why: an exact 0, or a NaN (or
# infinite) median, written where the bar would stand.
bar_note(y) = (y == y) ? (y == 0 ? 'exact 0' : '') : 'NaN'
do for [pi=1:npanel] {
	@panel_setup
	@floor_draw
	b0 = (pi - 1) * nseries
	plot for [si=1:nseries] $data index (b0 + si - 1) using (dash[si] == 1 ? xpos($1, si) : NaN):(logy($2)) \
		with boxes lc color[si] fs solid 0.6 border notitle, \
	     for [si=1:nseries] $data index (b0 + si - 1) using (dash[si] > 1 ? xpos($1, si) : NaN):(logy($2)) \
		with boxes lc color[si] fs pattern hatch(dash[si]) border notitle, \
	     for [si=1:nseries] $data index (b0 + si - 1) using (xpos($1, si)):(logy($2)):(floor_y($3)):(logy($4)) \
		with yerrorbars lc rgb '#000000' lw 1.5 pt 7 ps 0.5 * pscale notitle, \
	     for [si=1:nseries] $data index (b0 + si - 1) using (xpos($1, si)):(ymin * 3):(bar_note($2)) \
		with labels rotate by 90 left font ',9' tc rgb '#333333' notitle
	@panel_done
}
@key_setup
plot for [si=1:nseries] $nan using 1:2 with boxes lc color[si] fs solid 0.6 border \
		title (dash[si] == 1 ? series[si] : ''), \
     for [si=1:nseries] $nan using 1:2 with boxes lc color[si] fs pattern hatch(dash[si]) border \
		title (dash[si] > 1 ? series[si] : ''), \
     $nan using 1:2:3:4 with yerrorbars lc rgb '#000000' lw 1.5 pt 7 ps 0.5 * pscale title extra_key, \
     NaN with lines dt 3 lw 1.5 lc rgb '#000000' title floor_entry
unset multiplot
