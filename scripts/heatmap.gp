# heatmap.gp - the median error over two swept parameters as a colour: x (the
# split count) across, one row per curve (the LSE offset) up, one panel per
# value of the panel column (the LSE storage format), on one logarithmic
# colour scale shared by the panels; a cell with no positive median (exact,
# NaN) is left white.
#
# Redraw one chart by hand:
#   gnuplot -c scripts/heatmap.gp DIR/lse-grid.csv DIR/lse-grid.png png
# The numbers come from DIR/.plot/lse-grid.gp, which `skv report DIR` writes
# from the CSV (see scripts/common.gp); $grid holds the colours. Edit this
# file to change how the chart looks; rerun `skv report DIR` to change what
# it shows.

_slash(s, i) = i < 1 ? 0 : s[i:i] eq '/' ? i : _slash(s, i - 1)
array args[4] = [ARG0, ARG1, ARG2, ARG3]
nargs = ARGC
extra_key = ''
# Room on the right of the panels for the colour box and its labels.
margin_right = 120
load ARG0[1:_slash(ARG0, strlen(ARG0))].'common.gp'

# Every column is a category. Past 16 columns of numbers, those whose value
# is a multiple of a power of two (8 for split counts to 64) are labelled,
# with the first and the last; rows every k-th for about ten labels.
_num(s) = s + 0
_top = _num(xticlab[ncat])
_step = 1
while (ncat > 16 && _step * 10 < _top) { _step = _step * 2 }
set xtics () scale 0.5
do for [_i=1:ncat] {
	_v = _num(xticlab[_i])
	if (_i == 1 || _i == ncat || ncat <= 16 || (_v == int(_v) && int(_v) % _step == 0)) {
		set xtics add (xticlab[_i] _i)
	}
}
set xrange [0.5:ncat + 0.5]
_yevery = nseries > 12 ? int((nseries + 8) / 10) : 1
set ytics () scale 0.5 noenhanced
do for [_i=1:nseries] {
	if ((_i - 1) % _yevery == 0) { set ytics add (rowlab[_i] _i) }
}
set yrange [0.5:nseries + 0.5]
unset grid
# Perceptually ordered (viridis): dark for the smallest error, yellow for the
# largest; the colour box is in decades of the metric.
set palette defined (0 '#440154', 1 '#3b528b', 2 '#21918c', 3 '#5ec962', 4 '#fde725')
set cbrange [log10(ymin):log10(ymax)]
set cbtics 1
set format cb '10^{%.0f}'
set cblabel zlabel noenhanced
do for [pi=1:npanel] {
	@panel_setup
	if (pi == npanel) {
		_c = (pi - 1) % pcols
		_r = (pi - 1) / pcols
		set colorbox vertical user origin screen (mL + _c * (pw + gap) + pw + 12) / (1.0 * width), \
			screen 1 - (head_px + _r * (vT + ph + vB) + vT + ph) / (1.0 * height) \
			size screen 14.0 / width, screen (1.0 * ph) / height
	} else {
		unset colorbox
	}
	plot $grid index (pi - 1) using 1:2:3 with image notitle
	@panel_done
}
unset multiplot
