# reduction-order.gp - spread of the error across reduction orders: per order
# (x) and merge rule (colour), a box from the first to the third quartile
# over the trials, whiskers from the smallest to the largest trial and a
# black bar at the median; one panel per value of the panel column (the
# combine format); a dotted line at 1/2 ulp, the most the exact output
# rounded once is off. The error is in ulps of the output format at the
# output's largest element, so a spread of one unit is one rounding of it.
#
# Redraw one chart by hand:
#   gnuplot -c scripts/reduction-order.gp DIR/reduction-order.csv DIR/reduction-order.png png
# The numbers come from DIR/.plot/reduction-order.gp, which `skv report DIR`
# writes from the CSV (see scripts/common.gp). Edit this file to change how
# the chart looks; rerun `skv report DIR` to change what it shows.

_slash(s, i) = i < 1 ? 0 : s[i:i] eq '/' ? i : _slash(s, i - 1)
array args[4] = [ARG0, ARG1, ARG2, ARG3]
nargs = ARGC
extra_key = 'box: quartiles, whiskers: min-max, bar: median'
load ARG0[1:_slash(ARG0, strlen(ARG0))].'common.gp'

@set_category_tics
set xrange [0.5:ncat + 0.5]
set grid noxtics
if (ylog) {
	set logscale y 10
	set format y '10^{%L}'
	set yrange [ymin:ymax]
} else {
	set yrange [0:*]
}
# Series side by side inside each category.
bw = 0.8 / nseries
xpos(x, si) = x + (si - (nseries + 1) / 2.0) * bw
set boxwidth bw * 0.85 absolute

# The series' first key is its colour; its second key (dash[]) is the fill:
# light solid for the first value, hatching at a new angle for each other.
hatch(k) = k + 2
do for [pi=1:npanel] {
	@panel_setup
	@floor_draw
	b0 = (pi - 1) * nseries
	plot for [si=1:nseries] $data index (b0 + si - 1) using (dash[si] == 1 ? xpos($1, si) : NaN):5:3:4:6 \
		with candlesticks whiskerbars 0.6 lc color[si] lw 1.5 fs solid 0.35 border notitle, \
	     for [si=1:nseries] $data index (b0 + si - 1) using (dash[si] > 1 ? xpos($1, si) : NaN):5:3:4:6 \
		with candlesticks whiskerbars 0.6 lc color[si] lw 1.5 fs pattern hatch(dash[si]) border notitle, \
	     for [si=1:nseries] $data index (b0 + si - 1) using (xpos($1, si)):2:2:2:2 \
		with candlesticks lc rgb '#000000' lw 2.5 notitle
	@panel_done
}
@key_setup
plot for [si=1:nseries] $nan using 1:2 with boxes lc color[si] lw 1.5 fs solid 0.35 border \
		title (dash[si] == 1 ? series[si] : ''), \
     for [si=1:nseries] $nan using 1:2 with boxes lc color[si] lw 1.5 fs pattern hatch(dash[si]) border \
		title (dash[si] > 1 ? series[si] : ''), \
     NaN with lines lc rgb '#000000' lw 2.5 title extra_key, \
     NaN with lines dt 3 lw 1.5 lc rgb '#000000' title floor_entry
unset multiplot
