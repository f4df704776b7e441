# reduction-order data for scripts/reduction-order.gp, written by `skv report` from reduction-order.csv; do not edit.
# Variables name the chart; $data holds one block per curve, panel pi and
# series si (1-based) at index (pi - 1) * nseries + si - 1, one line per
# point: x  median  min  max  q1  q3 of the metric over the trials.
# A median that is not finite is NaN; min, max, q1, q3 at +inf are ymax
# and, on a log axis, at 0 or below are ymin.
experiment = 'reduction-order'
title = 'reduction-order: the error across reduction orders of the merge, in ulps of the output''s largest element'
fixed = 'ctx 2048, head-dim 64, dist gaussian, score scale 0.5, input fp32, kv-cache none, LSE offset 0,'."\n".'splits 64, layout even, block size 128, compute fp32, p fp32, LSE base e, LSE fp32, output fp32,'."\n".'blocks forward, acc compute, formula skv, lanes 0, math exact, gpu ieee, empty guard,'."\n".'merge threads 8, round states 0, norm div, seed 1, 32 trials per point'
ntrials = 32
metric = 'norm_ulp_err'
xlabel = 'reduction order of the merge'
zlabel = 'norm_ulp_err'
ylabel = 'largest error in ulps of fp32 at max |o*|'
npanel = 2
array panel[2] = ['combine fp16', 'combine fp32']
nseries = 4
array series[4] = ['partial fp16, onepass', 'partial fp16, pairwise', 'partial fp32, onepass', 'partial fp32, pairwise']
array color[4] = [1, 1, 3, 3]
array dash[4] = [1, 2, 1, 2]
xcat = 1
ncat = 7
array xticlab[7] = ['seq', 'rev', 'tree', 'random', 'asc', 'desc', 'strided']
xticlen = 7
nx = 7
array rowlab[4] = ['fp16, onepass', 'fp16, pairwise', 'fp32, onepass', 'fp32, pairwise']
ymin = 0.10000000000000001
ymax = 1000000
ylog = 1
nfloor = 1
floor_ulp = 1
array floor_fmt[1] = ['']
array floor_y[2] = [0.5, 0.5]
note = ''
$data << EOD
# panel 1, series 1
1 28425.4 14473.9 94590.8 19781.2 50132.5
2 29629 10280.2 76161.4 20042.6 39874
3 22300.8 9838.54 43998.5 17020.3 31176.8
4 34444.8 13481.5 64189 24427 40919.8
5 33917.4 12386.6 76161.4 21654.2 47450.4
6 32327 13159.2 78697.7 20846.5 44395
7 21742.9 8519.2 54121.7 18420.9 27741.6


# panel 1, series 2
1 25855 10920.9 50446.1 14030.1 37720.4
2 25096.1 8667.92 75926 16969.3 32021.7
3 10172.5 5557.3 18061.9 7116.62 14042.4
4 31094 9727.42 51324.4 18578.5 36548.6
5 22229.4 8505.28 49537.3 13257.1 30188
6 25513.7 12885.1 76222.3 19458 32620.3
7 18931.8 9478.24 43381.1 13483.9 22833.7


# panel 1, series 3
1 28337.1 14473.9 94590.8 19611.9 50386
2 29629 9330.21 76161.4 18453.8 45771.1
3 22397.6 9483.51 47805 14357.9 31119.5
4 32818.7 12775.2 67378.5 23265.5 44051.1
5 33444.6 12977.5 63791.9 18550.3 45483.2
6 29464.6 11539.6 78697.7 20480.8 42404.4
7 22503.4 10256.5 43998.5 15089.3 29098


# panel 1, series 4
1 23740.7 9129.68 50446.1 16108.7 34287.1
2 24084.6 11750.1 67966.5 16465.4 35801.3
3 10172.5 5557.3 18061.9 7116.62 14042.4
4 30009.6 12329.7 49219.8 20738.4 34189.4
5 22229.4 8505.28 49537.3 13257.1 30188
6 27087.1 12885.1 69369.1 18013.7 37823
7 18788.4 10429.8 42995.9 13054.2 24391.6


# panel 2, series 1
1 2702 1265.86 5602.4 1760.46 3661.3
2 2700.25 1264.36 5605.4 1760.02 3662.67
3 2701.5 1265.86 5604.4 1759.96 3661.42
4 2700.37 1262.36 5604.4 1759.83 3662.36
5 2700.12 1265.86 5603.4 1760.14 3661.05
6 2701.75 1266.36 5604.4 1760.77 3660.3
7 2700.87 1265.86 5603.4 1759.77 3662.17


# panel 2, series 2
1 2702.37 1263.86 5601.4 1759.96 3662.3
2 2700.25 1262.36 5605.4 1759.58 3662.55
3 2700.5 1263.86 5603.4 1759.46 3662.55
4 2702.25 1263.36 5603.4 1759.96 3662.42
5 2700.12 1262.86 5606.4 1759.89 3661.8
6 2700.62 1263.36 5602.4 1759.56 3662.36
7 2701 1263.36 5601.4 1759.21 3663.05


# panel 2, series 3
1 4.61384 2.0658 11.1036 3.30216 6.30506
2 4.6481 2.03475 9.32066 3.16774 5.5092
3 3.6006 1.83383 7.17795 2.71844 5.25257
4 4.49632 2.03924 10.8119 2.90095 5.40098
5 4.14421 2.12878 8.38752 2.71591 5.1658
6 4.49011 1.85261 13.0408 3.17004 5.40705
7 3.83283 1.52694 6.73684 3.05059 5.21534


# panel 2, series 4
1 3.80169 1.55441 8.3275 2.33571 4.90464
2 3.80195 1.73324 6.58729 2.42913 4.61818
3 2.63244 1.42735 4.7689 1.86328 3.5529
4 3.59343 1.90998 8.04077 2.95102 5.19821
5 3.38916 1.42559 7.67718 2.16226 4.78759
6 4.01495 1.75909 9.79246 2.9481 4.74136
7 3.78843 1.37051 6.4018 2.13262 4.54666
EOD
