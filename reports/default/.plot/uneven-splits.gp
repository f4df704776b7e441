# uneven-splits data for scripts/merge-rule.gp, written by `skv report` from uneven-splits.csv; do not edit.
# Variables name the chart; $data holds one block per curve, panel pi and
# series si (1-based) at index (pi - 1) * nseries + si - 1, one line per
# point: x  median  min  max  q1  q3 of the metric over the trials.
# A median that is not finite is NaN; min, max, q1, q3 at +inf are ymax
# and, on a log axis, at 0 or below are ymin.
experiment = "uneven-splits"
title = "uneven-splits: uneven and empty splits, per merge rule"
fixed = "ctx 4096, head-dim 64, dist gaussian, score scale 0.5, input fp32, LSE offset 0, block size 128,\ncompute fp32, p fp32, LSE base e, partial fp32, LSE fp32, combine fp32, output fp32, order seq,\nempty guard, merge threads 1, round states 0, seed 1, 8 trials per point"
ntrials = 8
metric = "norm_rel_err"
xlabel = "split layout"
ylabel = "normwise relative error ‖o − o*‖₂ / ‖o*‖₂"
npanel = 2
array panel[2] = ["splits 16", "splits 128"]
nseries = 4
array series[4] = ["onepass", "pairwise", "mean", "sum"]
array color[4] = [1, 2, 3, 4]
array dash[4] = [1, 1, 1, 1]
xcat = 1
ncat = 4
xtics = "('even' 1, 'random' 2, 'skewed' 3, 'holes' 4)"
xticlen = 6
ymin = 9.9999999999999995e-08
ymax = 1000
ylog = 1
note = ""
$data << EOD
# panel 1, series 1
1 4.31227e-07 3.69395e-07 5.8752e-07 4.00499e-07 4.46955e-07
2 5.10539e-07 4.2134e-07 6.70242e-07 4.67743e-07 5.53286e-07
3 7.34242e-07 5.46547e-07 8.41143e-07 6.64289e-07 8.15459e-07
4 5.21275e-07 4.2244e-07 6.76047e-07 4.86479e-07 6.16487e-07


# panel 1, series 2
1 3.65362e-07 2.94288e-07 4.56894e-07 3.31148e-07 4.39902e-07
2 4.78458e-07 3.87954e-07 6.9772e-07 4.38643e-07 5.09982e-07
3 7.39469e-07 6.39661e-07 8.59412e-07 6.67572e-07 8.17978e-07
4 4.84742e-07 4.42608e-07 5.42343e-07 4.50999e-07 5.1298e-07


# panel 1, series 3
1 0.03373 0.0186991 0.0472746 0.0305485 0.0392067
2 0.436538 0.340414 0.631316 0.384451 0.535371
3 6.23792 5.13663 7.5223 5.76114 6.85671
4 0.499544 0.49797 0.50155 0.499122 0.500432


# panel 1, series 4
1 14.9961 14.9043 15.0989 14.9848 15.0424
2 11.2044 8.55337 12.8729 10.1407 11.7702
3 99.8509 83.2833 121.293 92.686 109.433
4 7.00833 6.97989 7.04451 6.99828 7.01714


# panel 2, series 1
1 4.09717e-07 2.51486e-07 1.00872e-06 3.60539e-07 4.37798e-07
2 4.01069e-07 2.80707e-07 6.77594e-07 3.21596e-07 4.42673e-07
3 7.34242e-07 5.46547e-07 8.41143e-07 6.64289e-07 8.15459e-07
4 3.82865e-07 2.83416e-07 5.7337e-07 3.22191e-07 4.55528e-07


# panel 2, series 2
1 2.81255e-07 2.17167e-07 5.45356e-07 2.55353e-07 3.55061e-07
2 3.11576e-07 2.83611e-07 3.71714e-07 2.86258e-07 3.30183e-07
3 7.39469e-07 6.39661e-07 8.59412e-07 6.67572e-07 8.17978e-07
4 2.89974e-07 2.49647e-07 3.99722e-07 2.84645e-07 3.06617e-07


# panel 2, series 3
1 0.0967785 0.0877608 0.113069 0.0961397 0.104324
2 0.505377 0.398367 0.576754 0.471115 0.538044
3 1.18587 1.09439 1.29913 1.15931 1.26514
4 0.504665 0.498945 0.511622 0.501458 0.506767


# panel 2, series 4
1 126.334 123.072 128.203 125.298 127.141
2 89.4975 81.8129 95.2674 84.422 94.7534
3 99.8509 83.2833 121.293 92.686 109.433
4 62.657 61.8707 63.4202 62.4008 63.1741
EOD
