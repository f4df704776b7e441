# empty-splits data for scripts/merge-rule.gp, written by `skv report` from empty-splits.csv; do not edit.
# Variables name the chart; $data holds one block per curve, panel pi and
# series si (1-based) at index (pi - 1) * nseries + si - 1, one line per
# point: x  median  min  max  q1  q3 of the metric over the trials.
# A median that is not finite is NaN; min, max, q1, q3 at +inf are ymax
# and, on a log axis, at 0 or below are ymin.
experiment = "empty-splits"
title = "empty-splits: each preset's merge with empty splits (a NaN result has no bar)"
fixed = "ctx 1024, head-dim 64, dist gaussian, score scale 0.5, LSE offset 0, splits 8, block size 128,\nseed 1, 2 trials per point"
ntrials = 2
metric = "norm_rel_err"
xlabel = "preset"
ylabel = "normwise relative error ‖o − o*‖₂ / ‖o*‖₂"
npanel = 1
array panel[1] = [""]
nseries = 4
array series[4] = ["even", "last-empty", "holes", "all-empty"]
array color[4] = [1, 2, 3, 4]
array dash[4] = [1, 1, 1, 1]
xcat = 1
ncat = 9
xtics = "('fa2' 1, 'fa3' 2, 'flashinfer' 3, 'tilelang' 4, 'xformers' 5, 'sglang' 6, 'flex' 7, 'exact-fp64' 8, 'naive-fp16' 9)"
xticlen = 10
ymin = 9.9999999999999998e-17
ymax = 0.01
ylog = 1
note = "11 points with a zero, infinite or NaN median not drawn"
$data << EOD
# panel 1, series 1
1 0.00231176 0.00196476 0.00265877 0.00213826 0.00248526
2 0.00231176 0.00196476 0.00265877 0.00213826 0.00248526
3 0.00230863 0.00186857 0.00274869 0.0020886 0.00252866
4 0.000756093 0.000620427 0.000891758 0.00068826 0.000823925
5 0.00231176 0.00196476 0.00265877 0.00213826 0.00248526
6 0.001798 0.00154925 0.00204675 0.00167363 0.00192238
7 0.00231176 0.00196476 0.00265877 0.00213826 0.00248526
8 5.86399e-16 5.34239e-16 6.38558e-16 5.60319e-16 6.12478e-16
9 0.00233607 0.00205545 0.00261669 0.00219576 0.00247638


# panel 1, series 2
1 0.00234697 0.00195813 0.00273581 0.00215255 0.00254139
2 0.00234697 0.00195813 0.00273581 0.00215255 0.00254139
3 NaN NaN NaN NaN NaN
4 0.00083422 0.000709968 0.000958472 0.000772094 0.000896346
5 0.00234697 0.00195813 0.00273581 0.00215255 0.00254139
6 0.001798 0.00154925 0.00204675 0.00167363 0.00192238
7 0.00235322 0.00195813 0.00274831 0.00215567 0.00255077
8 6.64352e-16 5.74469e-16 7.54235e-16 6.19411e-16 7.09293e-16
9 0.00255532 0.00207198 0.00303865 0.00231365 0.00279699


# panel 1, series 3
1 0.00241655 0.00210695 0.00272615 0.00226175 0.00257135
2 0.00241655 0.00210695 0.00272615 0.00226175 0.00257135
3 NaN NaN NaN NaN NaN
4 0.00196287 0.00152688 0.00239886 0.00174488 0.00218087
5 0.00241655 0.00210695 0.00272615 0.00226175 0.00257135
6 0.001798 0.00154925 0.00204675 0.00167363 0.00192238
7 0.00241655 0.00210695 0.00272615 0.00226175 0.00257135
8 7.78394e-16 7.39159e-16 8.17629e-16 7.58777e-16 7.98012e-16
9 0.00291396 0.00289109 0.00293682 0.00290253 0.00292539


# panel 1, series 4
1 0 1e-16 1e-16 1e-16 1e-16
2 0 1e-16 1e-16 1e-16 1e-16
3 NaN NaN NaN NaN NaN
4 NaN NaN NaN NaN NaN
5 0 1e-16 1e-16 1e-16 1e-16
6 0 1e-16 1e-16 1e-16 1e-16
7 0 1e-16 1e-16 1e-16 1e-16
8 0 1e-16 1e-16 1e-16 1e-16
9 NaN NaN NaN NaN NaN
EOD
