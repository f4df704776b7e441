# empty-splits data for scripts/merge-rule.gp, written by `skv report` from empty-splits.csv; do not edit.
# Variables name the chart; $data holds one block per curve, panel pi and
# series si (1-based) at index (pi - 1) * nseries + si - 1, one line per
# point: x  median  min  max  q1  q3 of the metric over the trials.
# A median that is not finite is NaN; min, max, q1, q3 at +inf are ymax
# and, on a log axis, at 0 or below are ymin.
experiment = 'empty-splits'
title = 'empty-splits: each preset''s merge with empty splits (bars a log axis cannot draw are labelled)'
fixed = 'ctx 1024, head-dim 64, dist gaussian, score scale 0.5, LSE offset 0, splits 8, block size 128,'."\n".'seed 1, 4 trials per point'
ntrials = 4
metric = 'norm_rel_err'
xlabel = 'preset'
zlabel = 'normwise relative error ‖o − o*‖₂ / ‖o*‖₂'
ylabel = 'normwise relative error ‖o − o*‖₂ / ‖o*‖₂'
npanel = 1
array panel[1] = ['']
nseries = 4
array series[4] = ['even', 'last-empty', 'holes', 'all-empty']
array color[4] = [1, 2, 3, 4]
array dash[4] = [1, 1, 1, 1]
xcat = 1
ncat = 9
array xticlab[9] = ['fa2', 'fa3', 'flashinfer', 'tilelang', 'xformers', 'sglang', 'flex', 'exact-fp64', 'naive-fp16']
xticlen = 10
nx = 9
array rowlab[4] = ['even', 'last-empty', 'holes', 'all-empty']
ymin = 1.0000000000000001e-17
ymax = 0.01
ylog = 1
nfloor = 3
floor_ulp = 0
array floor_fmt[3] = ['bf16', 'fp16', 'fp64']
array floor_y[3] = [0.0017775039129015622, 0.0001681552539845395, 4.2720352664042163e-17]
note = '9 points with a zero, infinite or NaN median not drawn'
$data << EOD
# panel 1, series 1
1 0.00256982 0.00196476 0.00289162 0.00235184 0.00271698
2 0.00256982 0.00196476 0.00289162 0.00235184 0.00271698
3 0.00228828 0.00186857 0.00274869 0.00204666 0.00254008
4 0.00086644 0.000620427 0.000891758 0.000786909 0.000890798
5 0.00256982 0.00196476 0.00289162 0.00235184 0.00271698
6 0.0017775 0.00152538 0.00204675 0.00154328 0.00201601
7 0.00256982 0.00196476 0.00289162 0.00235184 0.00271698
8 6.95625e-16 5.34239e-16 7.84863e-16 6.12478e-16 7.60734e-16
9 0.00260503 0.00205545 0.00315328 0.00245889 0.00275083


# panel 1, series 2
1 0.00256911 0.00195813 0.00290281 0.00228197 0.00278694
2 0.00256911 0.00195813 0.00290281 0.00228197 0.00278694
3 0.0025127 0.0022219 0.00293579 0.00235154 0.00270694
4 0.00076236 0.000699339 0.000958472 0.000707311 0.000850681
5 0.00256911 0.00195813 0.00290281 0.00228197 0.00278694
6 0.0017775 0.00152538 0.00204675 0.00154328 0.00201601
7 0.00256911 0.00195813 0.00290281 0.00228197 0.00278694
8 7.54359e-16 5.74469e-16 8.51941e-16 7.09293e-16 7.78847e-16
9 0.00302483 0.00207198 0.00317466 0.00277625 0.00307266


# panel 1, series 3
1 0.00246104 0.00210695 0.00303808 0.00217368 0.00280414
2 0.00246104 0.00210695 0.00303808 0.00217368 0.00280414
3 0.00236104 0.00194851 0.0026457 0.00209323 0.00259688
4 0.00161174 0.00146175 0.00239886 0.0015106 0.00187215
5 0.00246104 0.00210695 0.00303808 0.00217368 0.00280414
6 0.0017775 0.00152538 0.00204675 0.00154328 0.00201601
7 0.00246104 0.00210695 0.00303808 0.00217368 0.00280414
8 8.31434e-16 7.39159e-16 8.72651e-16 7.98012e-16 8.52092e-16
9 0.00320097 0.00289109 0.00383768 0.00292539 0.00355826


# panel 1, series 4
1 0 1e-17 1e-17 1e-17 1e-17
2 0 1e-17 1e-17 1e-17 1e-17
3 0 1e-17 1e-17 1e-17 1e-17
4 NaN NaN NaN NaN NaN
5 0 1e-17 1e-17 1e-17 1e-17
6 0 1e-17 1e-17 1e-17 1e-17
7 0 1e-17 1e-17 1e-17 1e-17
8 0 1e-17 1e-17 1e-17 1e-17
9 NaN NaN NaN NaN NaN
EOD
