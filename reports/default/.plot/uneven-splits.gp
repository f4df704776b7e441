# uneven-splits data for scripts/merge-rule.gp, written by `skv report` from uneven-splits.csv; do not edit.
# Variables name the chart; $data holds one block per curve, panel pi and
# series si (1-based) at index (pi - 1) * nseries + si - 1, one line per
# point: x  median  min  max  q1  q3 of the metric over the trials.
# A median that is not finite is NaN; min, max, q1, q3 at +inf are ymax
# and, on a log axis, at 0 or below are ymin.
experiment = 'uneven-splits'
title = 'uneven-splits: uneven and empty splits, per merge rule'
fixed = 'ctx 4096, head-dim 64, dist gaussian, score scale 0.5, input fp32, kv-cache none, LSE offset 0,'."\n".'block size 128, compute fp32, p fp32, LSE base e, partial fp32, LSE fp32, combine fp32, output fp32,'."\n".'blocks forward, acc compute, formula skv, lanes 0, math exact, gpu ieee, order seq, empty guard,'."\n".'merge threads 1, round states 0, norm div, seed 1, 16 trials per point'
ntrials = 16
metric = 'norm_rel_err'
xlabel = 'split layout'
zlabel = 'normwise relative error ‖o − o*‖₂ / ‖o*‖₂'
ylabel = 'normwise relative error ‖o − o*‖₂ / ‖o*‖₂'
npanel = 2
array panel[2] = ['splits 16', 'splits 128']
nseries = 4
array series[4] = ['onepass', 'pairwise', 'mean', 'sum']
array color[4] = [1, 2, 3, 4]
array dash[4] = [1, 1, 1, 1]
xcat = 1
ncat = 4
array xticlab[4] = ['even', 'random', 'skewed', 'holes']
xticlen = 6
nx = 4
array rowlab[4] = ['onepass', 'pairwise', 'mean', 'sum']
ymin = 1e-08
ymax = 1000
ylog = 1
nfloor = 1
floor_ulp = 0
array floor_fmt[1] = ['fp32']
array floor_y[2] = [2.5193140373861636e-08, 2.5193140373861636e-08]
note = ''
$data << EOD
# panel 1, series 1
1 4.40439e-07 3.69395e-07 6.83915e-07 4.04565e-07 5.7523e-07
2 5.54143e-07 4.2134e-07 7.15776e-07 4.83219e-07 6.46239e-07
3 7.68109e-07 5.46547e-07 1.11743e-06 7.00629e-07 8.26006e-07
4 5.7616e-07 4.2244e-07 6.93462e-07 4.89821e-07 6.60474e-07


# panel 1, series 2
1 3.71192e-07 2.94288e-07 4.77489e-07 3.318e-07 4.3913e-07
2 4.94562e-07 3.57029e-07 7.36723e-07 4.40502e-07 5.67265e-07
3 7.57328e-07 5.61264e-07 1.07286e-06 6.93851e-07 8.17978e-07
4 4.79285e-07 4.4126e-07 6.08255e-07 4.50603e-07 5.1243e-07


# panel 1, series 3
1 0.03373 0.0186991 0.0494722 0.0277724 0.0393427
2 0.475181 0.340414 0.631316 0.420657 0.536209
3 6.24652 5.13663 7.5223 5.7745 6.81565
4 0.499959 0.496738 0.50155 0.499307 0.500663


# panel 1, series 4
1 14.9885 14.9043 15.0989 14.9672 15.0424
2 10.5154 8.55337 12.8729 10.2049 11.5711
3 100.613 83.2833 121.293 92.799 108.296
4 7.00338 6.97801 7.05677 6.99228 7.01439


# panel 2, series 1
1 4.42816e-07 2.51486e-07 1.00872e-06 3.74339e-07 6.06991e-07
2 4.32027e-07 2.80707e-07 6.77594e-07 3.33778e-07 5.10438e-07
3 7.68109e-07 5.46547e-07 1.11743e-06 7.00629e-07 8.26006e-07
4 4.48539e-07 2.83416e-07 7.32268e-07 3.22191e-07 5.32054e-07


# panel 2, series 2
1 3.02297e-07 2.17167e-07 5.45356e-07 2.57129e-07 3.66847e-07
2 3.07072e-07 2.68596e-07 3.9936e-07 2.88316e-07 3.30183e-07
3 7.57328e-07 5.61264e-07 1.07286e-06 6.93851e-07 8.17978e-07
4 2.96715e-07 2.34468e-07 3.99722e-07 2.84645e-07 3.23851e-07


# panel 2, series 3
1 0.0963433 0.0669445 0.113069 0.0865927 0.103396
2 0.511025 0.398367 0.576754 0.492595 0.543984
3 1.20286 1.09439 1.29913 1.16613 1.24323
4 0.502574 0.498945 0.511622 0.499926 0.505452


# panel 2, series 4
1 126.394 123.072 128.9 125.735 127.389
2 89.8876 80.121 97.8065 83.0429 93.5755
3 100.613 83.2833 121.293 92.799 108.296
4 62.9612 61.8707 63.4569 62.5998 63.1916
EOD
