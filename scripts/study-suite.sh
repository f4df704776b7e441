#!/bin/sh
# study-suite.sh - prints the suite of issue 17's full study (docs/distributed.md projects it): every production preset with three cache formats for the partial outputs and three for the LSEs, split counts 1 to 256, contexts of 1K to 1M keys, a 41-point LSE grid, 1024 trials; one line per context and block of 32 trials (seeds 1..32), each into its own folder, so that no line exceeds skv's 1,000,000 rows (32 x 29889 here).
set -eu
grid=$(seq -s, 0 25 1000)
echo "# study.suite - made by scripts/study-suite.sh: 192 lines, 18432 work units"
for ctx in 1024 4096 16384 65536 262144 1048576; do
	for seed in $(seq 1 32); do
		echo "run systems --ctx=$ctx --seed=$seed --trials=32 --splits=1,2,4,8,16,32,64,128,256 --lse-offset=$grid --partial=fp16,bf16,fp32 --lse=fp16,bf16,fp32 --out=ctx$ctx/seed$seed"
	done
done
