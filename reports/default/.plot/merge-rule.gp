# merge-rule data for scripts/merge-rule.gp, written by `skv report` from merge-rule.csv; do not edit.
# Variables name the chart; $data holds one block per curve, panel pi and
# series si (1-based) at index (pi - 1) * nseries + si - 1, one line per
# point: x  median  min  max  q1  q3 of the metric over the trials.
# A median that is not finite is NaN; min, max, q1, q3 at +inf are ymax
# and, on a log axis, at 0 or below are ymin.
experiment = 'merge-rule'
title = 'merge-rule: LSE-weighted merges against the plain mean and sum of the partials'
fixed = 'ctx 1024, head-dim 8, dist gaussian, score scale 1, input fp64, kv-cache none, LSE offset 0,'."\n".'splits 8, layout even, block size 128, compute fp64, p fp64, LSE base 2, partial fp64, LSE fp64,'."\n".'combine fp64, output fp64, blocks forward, acc compute, formula skv, lanes 0, math exact, gpu ieee,'."\n".'order seq, empty guard, merge threads 1, round states 0, norm div, seed 1, 32 trials per point'
ntrials = 32
metric = 'norm_rel_err'
xlabel = 'merge rule'
zlabel = 'normwise relative error ‖o − o*‖₂ / ‖o*‖₂'
ylabel = 'normwise relative error ‖o − o*‖₂ / ‖o*‖₂'
npanel = 1
array panel[1] = ['']
nseries = 1
array series[1] = ['']
array color[1] = [7]
array dash[1] = [1]
xcat = 1
ncat = 4
array xticlab[4] = ['onepass', 'pairwise', 'mean', 'sum']
xticlen = 8
nx = 4
array rowlab[1] = ['']
ymin = 1.0000000000000001e-17
ymax = 100
ylog = 1
nfloor = 1
floor_ulp = 0
array floor_fmt[1] = ['fp64']
array floor_y[1] = [4.2546297127692237e-17]
note = ''
$data << EOD
# panel 1, series 1
1 6.35624e-16 3.56105e-16 1.35664e-15 5.18968e-16 8.46311e-16
2 5.93207e-16 1.94788e-16 1.19522e-15 4.44883e-16 7.94872e-16
3 0.104968 0.0328855 0.360492 0.0600128 0.141225
4 7.01228 6.34166 7.69672 6.84933 7.12875
EOD
