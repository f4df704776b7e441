#!/bin/sh
# gpu_run.sh - the device check in one call: export a prepared set of skv problems, run PyTorch's real kernels on them (run_kernels.py), leave the problems and the kernels' outputs in OUT for skv grade.
# usage: sh scripts/device/gpu_run.sh SKV OUT
#   SKV       the skv binary (build/skv)
#   OUT       a folder: OUT/problems/*.safetensors (skv export), OUT/kernels/*.BACKEND.safetensors,
#             OUT/machine.txt (nvidia-smi, python, torch)
# environment: BACKENDS (default flash,efficient,flex), PROBLEMS (default below: FMT:CTX:HEAD_DIM:HEADS:KV_HEADS
# words), DEVICE (default cuda). Nothing is downloaded.
set -u
skv=$1
out=$2
here=$(dirname "$0")
backends=${BACKENDS:-flash,efficient,flex}
problems=${PROBLEMS:-"bf16:512:128:8:2 fp16:512:128:8:2 bf16:4096:128:8:2 fp16:4096:64:8:8 bf16:16384:128:4:1 fp32:4096:128:8:2"}
mkdir -p "$out/problems" "$out/kernels" || exit 2
for p in $problems; do
	set -- $(echo "$p" | tr ':' ' ')
	name=$1-ctx$2-d$3-h$4-kv$5
	"$skv" export --out="$out/problems/$name.safetensors" --input="$1" --ctx="$2" --head-dim="$3" --heads="$4" \
		--kv-heads="$5" || exit 2
done
{
	date -u +%Y-%m-%dT%H:%M:%SZ
	nvidia-smi 2>&1 || echo "nvidia-smi: not available"
	python3 --version 2>&1
	python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)' 2>&1
} >"$out/machine.txt"
python3 "$here/run_kernels.py" "$out"/problems/*.safetensors --out="$out/kernels" --backends="$backends" \
	--device="${DEVICE:-cuda}"
