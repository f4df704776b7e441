# tensor-cores-fp8 data for scripts/split-count.gp, written by `skv report` from tensor-cores-fp8.csv; do not edit.
# Variables name the chart; $data holds one block per curve, panel pi and
# series si (1-based) at index (pi - 1) * nseries + si - 1, one line per
# point: x  median  min  max  q1  q3 of the metric over the trials.
# A median that is not finite is NaN; min, max, q1, q3 at +inf are ymax
# and, on a log axis, at 0 or below are ymin.
experiment = 'tensor-cores-fp8'
title = 'tensor-cores-fp8: FA3''s FP8 path: IEEE fp32 against the GPUs'' FP8 tensor cores'
fixed = 'preset fa3, ctx 4096, head-dim 128, score scale 0.5, input e4m3, kv-cache none, LSE offset 0,'."\n".'layout even, block size 128, compute fp32, p e4m3, LSE base e2, partial fp32, LSE fp32, combine fp32,'."\n".'output bf16, blocks reverse, acc compute, formula fa3, lanes 4, lane-keys 2, math exact,'."\n".'merge onepass-norm, order lanes, empty fa3, merge threads 32, round states 0, norm div, seed 1, 8 trials per point'
ntrials = 8
metric = 'norm_rel_err'
xlabel = 'number of KV splits S'
zlabel = 'normwise relative error ‖o − o*‖₂ / ‖o*‖₂'
ylabel = 'normwise relative error ‖o − o*‖₂ / ‖o*‖₂'
npanel = 2
array panel[2] = ['gaussian', 'sink']
nseries = 4
array series[4] = ['gpu ieee', 'gpu ada', 'gpu h100', 'gpu b200']
array color[4] = [1, 2, 3, 4]
array dash[4] = [1, 1, 1, 2]
xcat = 0
ncat = 0
array xticlab[1] = ['']
xticlen = 0
nx = 3
array rowlab[4] = ['ieee', 'ada', 'h100', 'b200']
ymin = 0.0001
ymax = 0.10000000000000001
ylog = 1
nfloor = 1
floor_ulp = 0
array floor_fmt[1] = ['bf16']
array floor_y[2] = [0.0016290325113759961, 0.0016624356089473017]
note = 'gpu b200 lies on gpu ieee (within 2%)'
$data << EOD
# panel 1, series 1
1 0.0270954 0.0249956 0.030168 0.0266416 0.0284488
8 0.0247589 0.0229414 0.0301181 0.0239409 0.0262164
64 0.0255816 0.02077 0.0289125 0.0226547 0.0267996


# panel 1, series 2
1 0.0270328 0.0255424 0.0300808 0.0267499 0.0277685
8 0.0249345 0.0231747 0.029918 0.0239206 0.0266477
64 0.0257053 0.020825 0.0287099 0.0223483 0.0268652


# panel 1, series 3
1 0.0269476 0.0257585 0.030164 0.0266487 0.0281038
8 0.0246591 0.0229567 0.0298027 0.0238587 0.0260494
64 0.025541 0.021237 0.0287065 0.0222336 0.0267672


# panel 1, series 4
1 0.0270954 0.0249956 0.030168 0.0266416 0.0284488
8 0.0247589 0.0229414 0.0301181 0.0239409 0.0262164
64 0.0255816 0.02077 0.0289125 0.0226547 0.0267996


# panel 2, series 1
1 0.00166468 0.00139496 0.00185278 0.00158066 0.00180508
8 0.00166299 0.00139692 0.00185389 0.00158007 0.0018009
64 0.00166541 0.00139897 0.00185328 0.00157888 0.00180045


# panel 2, series 2
1 0.00215431 0.00170083 0.00249161 0.00196539 0.00230103
8 0.00211627 0.00179175 0.00250824 0.00197467 0.00225968
64 0.00211412 0.00178174 0.00247875 0.00197364 0.00233121


# panel 2, series 3
1 0.00196694 0.00166908 0.00249161 0.00182284 0.00205737
8 0.00194223 0.00168706 0.0025025 0.00175818 0.00202939
64 0.00195732 0.00164053 0.00245651 0.00175331 0.00200384


# panel 2, series 4
1 0.00166468 0.00139496 0.00185278 0.00158066 0.00180508
8 0.00166299 0.00139692 0.00185389 0.00158007 0.0018009
64 0.00166541 0.00139897 0.00185328 0.00157888 0.00180045
EOD
