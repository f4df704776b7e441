# common.gp - set-up shared by skv's chart scripts: arguments, data file, terminal, colours, layout.
#
# Loaded by every chart script (split-count.gp, ...), which gnuplot runs as
#   gnuplot -c scripts/CHART.gp DIR/EXPERIMENT.csv [OUTPUT] [png|svg]
# OUTPUT defaults to DIR/EXPERIMENT.png; the terminal defaults to the
# output's extension. The numbers are not read from the CSV itself: gnuplot
# cannot aggregate trials, so `skv report DIR` writes them, with the curve
# names and the title, to DIR/.plot/EXPERIMENT.gp, which is loaded here.
# That file defines: experiment, title, fixed (the parameters that do not
# vary, in lines), ntrials, metric, xlabel, ylabel, zlabel (the metric, for a
# colour box), npanel, panel[], nseries, series[], rowlab[] (the series by
# their values alone), color[] and dash[] (per series), xcat (1: x is a
# category index), ncat, xticlab[] (the labels of a category axis), xticlen
# (its longest label, in characters), nx (distinct x values), ymin and ymax
# (shared by the panels), ylog (1: a log y axis), nfloor, floor_fmt[] and
# floor_y[(pi - 1) * nfloor + k] (the floor of output format k in panel pi,
# NaN where absent; floor_ulp: they are the 1/2-ulp bound), note (what the
# axes leave out, curves drawn under others), the datablock $data: one
# block per (panel, series), columns x median min max q1 q3, and for a
# heatmap $grid: one block per panel, rows "column row log10(median)".
#
# Layout: the title and fixed parameters on top, panels in a grid of two
# columns, the legend outside every panel (in the free cell of an odd grid,
# else in a strip at the bottom), so it never hides data.

# The chart script saves its arguments in args[] and nargs before loading
# this file, which does not see them.
if (nargs < 1) {
	print "usage: gnuplot -c ".args[1]." DIR/EXPERIMENT.csv [OUTPUT.png|OUTPUT.svg] [png|svg]"
	exit status 2
}
csv = args[2]
_cut = _slash(csv, strlen(csv))
plotdir = csv[1:_cut].'.plot/'
stem = csv[_cut + 1:strlen(csv)]
stem = strlen(stem) > 4 && stem[strlen(stem) - 3:strlen(stem)] eq '.csv' ? stem[1:strlen(stem) - 4] : stem
load plotdir.stem.'.gp'

out = nargs >= 2 && strlen(args[3]) > 0 ? args[3] : csv[1:_cut].stem.'.png'
term = nargs >= 3 && strlen(args[4]) > 0 ? args[4] : (strlen(out) > 4 && out[strlen(out) - 3:strlen(out)] eq '.svg' ? 'svg' : 'png')

# Sizes in pixels. One panel: 900 wide; more: two columns of panels about
# 400 wide, so a page or a repository view shows them at full size and the
# 12-point text stays readable.
pcols = npanel > 1 ? 2 : 1
prows = (npanel + pcols - 1) / pcols
width = npanel > 1 ? 1000 : 900
_fixlines = strlen(fixed) > 0 ? 1 : 0
do for [_i=1:strlen(fixed)] { _fixlines = _fixlines + (fixed[_i:_i] eq "\n") }
_notelines = strlen(note) > 0 ? 1 : 0
do for [_i=1:strlen(note)] { _notelines = _notelines + (note[_i:_i] eq "\n") }
head_px = 44 + 18 * (_fixlines + _notelines)
# The floor lines' legend entry, when there are floors.
floor_key = floor_ulp ? 'dotted: 1/2 ulp (exact, rounded once)' : 'dotted: floor (exact, rounded once)'
floor_entry = nfloor > 0 ? floor_key : ''
# The legend: as many columns as its longest name allows.
# The chart script may add entries of its own: extra_key, the longest ('' for
# none), and their number nextra (default: one when extra_key is set).
_longest = strlen(extra_key) > strlen(floor_entry) ? strlen(extra_key) : strlen(floor_entry)
do for [_i=1:nseries] { _longest = strlen(series[_i]) > _longest ? strlen(series[_i]) : _longest }
# gnuplot sizes key columns by a fixed character width (about 11 pixels at
# 12 points) whatever the glyphs, so the estimate uses the same.
# Panel geometry (the legend's place depends on the plot width): left and
# right margins, gap between columns, plot width.
mL = 95
mR = exists("margin_right") ? margin_right : 25
gap = 85
pw = (width - mL - mR - (pcols - 1) * gap) / pcols
keycols = int((width - 40) / (11.0 * (_longest + 6)))
keycols = keycols < 1 ? 1 : keycols
# Only named curves take a legend entry (skv report names none past 40).
_named = 0
do for [_i=1:nseries] { _named = _named + (strlen(series[_i]) > 0) }
_nextra = (exists("nextra") ? nextra : (strlen(extra_key) > 0)) + (nfloor > 0)
# An odd number of panels leaves the last grid cell free: the legend goes
# there when it fits in one column of at most 15 rows (the cell's height),
# otherwise in a strip under the panels, so it never covers a panel.
key_slot = npanel > 1 && npanel % pcols != 0 && _named + _nextra <= 15 && 11.0 * (_longest + 6) <= pw
keyrows = (_named + _nextra + keycols - 1) / keycols
# A legend of hundreds of curves (a sweep over many seeds) is not readable
# and would make the image taller than cairo draws: at most 40 rows of it
# are given room, the rest is cut at the bottom edge.
keyrows = keyrows > 40 ? 40 : keyrows
key_px = key_slot ? 0 : 24 + 24 * keyrows
# Per row: the panel title, plot height and tick labels; the x axis title
# once under the bottom row.
vT = 30
ph = npanel > 1 ? 290 : 400
# A chart script that sets tick_angle (degrees) gets its category tick
# labels rotated when they would not fit side by side (about 9 pixels a
# character) when they would not fit side by side in a panel's width, and
# room for them below the axis.
tick_angle = exists("tick_angle") && 9.0 * (xticlen + 1) * ncat > pw - 20 ? tick_angle : 0
vB = 30 + int(7.5 * xticlen * sin(tick_angle * pi / 180))
xl = 36
height = head_px + prows * (vT + ph + vB) + xl + key_px

if (term eq 'svg') {
	set terminal svg size width, height dynamic enhanced font 'DejaVu Sans,12' background rgb 'white'
} else {
	set terminal pngcairo size width, height enhanced font 'DejaVu Sans,12' background rgb 'white'
}
set output out
# The svg terminal draws points about 1.4 times larger than pngcairo: the
# scripts multiply their point sizes by pscale.
pscale = term eq 'svg' ? 0.7 : 1.0

# Okabe-Ito colours (told apart by colour-blind readers); a format keeps its
# colour in every chart: 1 fp16, 2 bf16, 3 fp32, 4 fp64.
set linetype 1 lc rgb '#D55E00' lw 2 pt 7
set linetype 2 lc rgb '#009E73' lw 2 pt 5
set linetype 3 lc rgb '#0072B2' lw 2 pt 9
set linetype 4 lc rgb '#444444' lw 2 pt 13
set linetype 5 lc rgb '#E69F00' lw 2 pt 11
set linetype 6 lc rgb '#CC79A7' lw 2 pt 15
set linetype 7 lc rgb '#56B4E9' lw 2 pt 7
set linetype 8 lc rgb '#882255' lw 2 pt 5
set linetype 9 lc rgb '#117733' lw 2 pt 9
set linetype 10 lc rgb '#999933' lw 2 pt 13
set linetype cycle 10
# Point types by colour: filled for the first value of the series' second
# key (dash 1), open for the others; past the tenth colour (the colours
# repeat) crosses and stars instead, so that curve 11 is not curve 1.
array pt_filled[10] = [7, 5, 9, 13, 11, 15, 7, 5, 9, 13]
array pt_open[10] = [6, 4, 8, 12, 10, 14, 6, 4, 8, 12]
array pt_cross[10] = [3, 2, 1, 3, 2, 1, 3, 2, 1, 3]
ptype(si) = (color[si] - 1) % 20 >= 10 ? pt_cross[(color[si] - 1) % 10 + 1] : \
	dash[si] == 1 ? pt_filled[(color[si] - 1) % 10 + 1] : pt_open[(color[si] - 1) % 10 + 1]

# Names hold '_' and '^', so every text is plain except the tick labels,
# which use enhanced text for exponents (10^{-7}).
set xlabel xlabel noenhanced
set ylabel ylabel noenhanced
set grid lc rgb '#dddddd' lw 1
set border lc rgb '#444444'
# An empty datablock: plotting it draws nothing but a legend sample of any
# style (NaN as a function only knows the function styles).
$nan << EOD
NaN NaN NaN NaN NaN
EOD

# Values a log axis cannot show become gaps, never made-up points.
logy(y) = y > 0 ? y : NaN
# A band edge of 0 is drawn at the bottom of the axis.
floor_y(y) = y > 0 ? y : ymin

# The ticks of a category axis, one label string at a time. The labels come
# from the CSV: they are only ever string values here, never text of a
# command (their text is never eval'd or expanded as a macro), so nothing
# in a results folder can run.
set_category_tics = 'set xtics (xticlab[1] 1); do for [_i=2:ncat] { set xtics add (xticlab[_i] _i) }'

set multiplot
set label 1001 title at screen 0.5, 1 - 16.0 / height center front noenhanced font ',13'
set label 1002 fixed.(strlen(note) > 0 ? "\n".note : '') at screen 0.5, 1 - 33.0 / height center front noenhanced font ',11'

# Before panel pi: its place in the grid; the y axis title only in the left
# column, the x axis title only under the last panel of each column.
panel_setup = '_c = (pi - 1) % pcols; _r = (pi - 1) / pcols; ' . \
	'set lmargin at screen (mL + _c * (pw + gap)) / (1.0 * width); ' . \
	'set rmargin at screen (mL + _c * (pw + gap) + pw) / (1.0 * width); ' . \
	'set tmargin at screen 1 - (head_px + _r * (vT + ph + vB) + vT) / (1.0 * height); ' . \
	'set bmargin at screen 1 - (head_px + _r * (vT + ph + vB) + vT + ph) / (1.0 * height); ' . \
	'set title panel[pi] noenhanced offset 0, -0.3; unset key; ' . \
	'if (_c == 0) { set ylabel ylabel noenhanced } else { unset ylabel }; ' . \
	'if (pi + pcols > npanel) { set xlabel xlabel noenhanced } else { unset xlabel }'
# After the first panel: the title is drawn once.
panel_done = 'unset label 1001; unset label 1002'
# In panel pi, before its plot: a dotted black line across it at each floor,
# named under its right end ("fp32 floor"), the previous panel's removed.
floor_name(k) = floor_ulp ? '1/2 ulp' : (strlen(floor_fmt[k]) > 0 ? floor_fmt[k].' floor' : 'floor')
floor_draw = 'do for [_k=1:8] { unset arrow 2000 + _k; unset label 2000 + _k }; ' . \
	'do for [_k=1:nfloor] { _fy = floor_y[(pi - 1) * nfloor + _k]; if (_fy == _fy && _fy > 0) { ' . \
	'set arrow 2000 + _k from graph 0, first _fy to graph 1, first _fy nohead dt 3 lw 1.5 lc rgb "#000000" front; ' . \
	'set label 2000 + _k floor_name(_k) at graph 0.99, first _fy right offset 0, -0.6 font ",9" tc rgb "#000000" front noenhanced } }'
# Before the legend: an empty plot across the bottom strip whose only
# content is the key; the chart script then plots its styles as NaN.
_key_common = 'unset arrow; do for [_k=1:8] { unset label 2000 + _k }; unset border; unset tics; unset xlabel; unset ylabel; unset title; unset grid; ' . \
	'unset logscale; unset xtics; unset ytics; set xrange [0:1]; set yrange [0:1]; '
if (key_slot) {
	key_setup = '_c = pcols - 1; _r = prows - 1; ' . \
		'set lmargin at screen (mL + _c * (pw + gap)) / (1.0 * width); ' . \
		'set rmargin at screen (mL + _c * (pw + gap) + pw) / (1.0 * width); ' . \
		'set tmargin at screen 1 - (head_px + _r * (vT + ph + vB) + vT) / (1.0 * height); ' . \
		'set bmargin at screen 1 - (head_px + _r * (vT + ph + vB) + vT + ph) / (1.0 * height); ' . \
		_key_common . 'set key center center vertical maxrows 15 noenhanced Left reverse samplen 2.5 width 1 spacing 1.15'
} else {
	key_setup = 'set lmargin at screen 0.01; set rmargin at screen 0.99; ' . \
		'set tmargin at screen (key_px - 2.0) / height; set bmargin at screen 0.002; ' . _key_common . \
		'set key center center horizontal maxcols keycols noenhanced Left reverse samplen 2.5 width 1 spacing 1.2'
}
