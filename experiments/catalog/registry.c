/* registry.c - the named experiments: each is a set of defaults over the one parameter space. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "catalog/catalog.h"

/* The defaults are flags applied over the parameter table's own defaults
 * (params.c); the command line applies over them. Each set is chosen to show
 * its effect in seconds on two cores; the `why` line says what it shows. */
const exp_def experiments[] = {
	{"split-count", KIND_SPLIT,
	 "error of the merged output against the number of KV splits, per partial and LSE storage format",
	 "--ctx=16384 --head-dim=128 --splits=1,2,4,8,16,32,64,128,256,512,1024 "
	 "--input=fp32 --compute=fp32 --p=fp32 --partial=fp16,bf16,fp32,fp64 "
	 "--lse=fp16,bf16,fp32,fp64 --combine=fp32 --output=fp32 --merge=onepass --trials=16",
	 "Input, compute and P in fp32 keep the kernel's own error near 1e-6 (it falls as more splits "
	 "shorten each split's accumulation), so the storage error of fp16 and bf16 partials and LSEs "
	 "stands clear of it; fp32 and fp64 storage show that kernel floor."},
	{"lse-magnitude", KIND_SPLIT,
	 "error against the LSE magnitude (a constant score offset) for each LSE storage format",
	 "--ctx=4096 --head-dim=128 --splits=4,32,256 --lse-offset=0,10,100,1000,10000 "
	 "--lse=fp16,bf16,fp32,fp64 --input=fp32 --compute=fp64 --p=fp64 --partial=fp64 "
	 "--combine=fp64 --output=fp64 --merge=onepass --trials=16",
	 "Every stage but the LSE storage is fp64, so the error is the LSE format's own: an LSE of "
	 "magnitude M stored with unit roundoff u moves each merge weight by about M u; once the "
	 "spacing exceeds the spread of the split LSEs they round together and the merge degenerates."},
	{"reduction-order", KIND_SPLIT,
	 "spread of the error across reduction orders for both real merges, one random permutation per trial",
	 "--ctx=2048 --head-dim=64 --splits=64 --order=seq,rev,tree,random,asc,desc,strided --merge-threads=8 "
	 "--merge=onepass,pairwise --input=fp32 --compute=fp32 --p=fp32 --partial=fp16,fp32 --lse=fp32 "
	 "--combine=fp16,fp32 --output=fp32 --trials=32",
	 "The merge's own rounding depends on the order: with an fp16 combine it shows at the 1e-3 "
	 "level; with fp32 partials and combine at the 1e-7 level; with fp16 partials and an fp32 "
	 "combine the storage error hides it. strided is FlashInfer's order with 8 threads. Outputs are "
	 "fp32 so ulp_err resolves the spread."},
	{"merge-rule", KIND_SPLIT,
	 "LSE-weighted merges (onepass, pairwise) against the plain mean and sum of the partials (seed 002)",
	 "--ctx=1024 --head-dim=8 --splits=8 --score-scale=1 --lse-base=2 --merge=onepass,pairwise,mean,sum "
	 "--input=fp64 --compute=fp64 --p=fp64 --partial=fp64 --lse=fp64 --combine=fp64 --output=fp64 "
	 "--trials=32",
	 "Seed 002's first demonstration (head-dim 8, 1024 keys, 8 splits, base 2, q ~ N(0, 1)) in "
	 "fp64 throughout: the weighted merges sit at fp64 roundoff, mean and sum are wrong by orders "
	 "of magnitude."},
	{"uneven-splits", KIND_SPLIT,
	 "uneven boundaries and empty splits (layouts even, random, skewed, holes) for every merge rule",
	 "--ctx=4096 --head-dim=64 --splits=16,128 --layout=even,random,skewed,holes "
	 "--merge=onepass,pairwise,mean,sum --input=fp32 --compute=fp32 --p=fp32 --partial=fp32 "
	 "--lse=fp32 --combine=fp32 --output=fp32 --trials=16",
	 "The weighted merges stay at the fp32 kernel floor whatever the boundaries and skip empty "
	 "splits without NaN; the mean and sum, which ignore the split sizes, are wrong, most of all "
	 "when the sizes are skewed."},
	{"block-size", KIND_ONLINE,
	 "online softmax attention against its block size, per compute format, causal and not",
	 "--ctx=256 --head-dim=64 --dist=gaussian,ramp --block-size=1,2,4,8,16,32,64,128,256 --causal=0,1 "
	 "--input=fp32 --compute=fp16,bf16,fp32 --p=fp32 --output=fp32 --trials=8",
	 "Whether the block size of the online softmax matters: each block rescales the running max, "
	 "sum and output in the compute format; one block (256) rescales nothing. The ramp "
	 "distribution (a recency bias of 8 nats across the context) moves the running max at every "
	 "block, the worst case for rescaling. Causal runs all 256 rows, each over its own prefix; "
	 "non-causal one decode row."},
	{"systems", KIND_SPLIT,
	 "every production-kernel preset side by side over split counts and LSE magnitudes",
	 "--preset=fa2,fa3,flashinfer,tilelang,xformers,sglang,flex,exact-fp64,naive-fp16 --ctx=8192 --head-dim=128 --splits=1,4,16,64,256 --lse-offset=0,50,500 --trials=8",
	 "Each preset fixes the stage formats, LSE base, merge, order and empty-split mode of a real "
	 "system (skv list shows them); the offsets put the LSEs near 0, 50 and 500. The error mixes "
	 "the split kernel's own (bf16 inputs, P rounded or not) with the storage and merge: read "
	 "exact-fp64 and naive-fp16 as the two ends."},
	{"empty-splits", KIND_SPLIT,
	 "what each preset's merge returns with one, several and all splits empty",
	 "--preset=fa2,fa3,flashinfer,tilelang,xformers,sglang,flex,exact-fp64,naive-fp16 --ctx=1024 --head-dim=64 --splits=8 --layout=even,last-empty,holes,all-empty --trials=4",
	 "The systems disagree on empty splits: FA2 returns LSE +inf for an all-empty row, FA3 leaves "
	 "empty rows unwritten (NaN here) and skips them, FlashInfer without a guard gives NaN when two "
	 "empty states meet. out_state and lse_state record what came back; all-empty is a row whose "
	 "keys are all masked, exact output 0 with LSE -inf."},
};

const size_t nexperiments = sizeof experiments / sizeof experiments[0];

const exp_def *experiment_find(const char *name)
{
	for (size_t i = 0; i < nexperiments; i++)
		if (strcmp(experiments[i].name, name) == 0)
			return &experiments[i];
	return NULL;
}

int catalog_spec_init(run_spec *s, const char *name, message *e)
{
	const exp_def *x = experiment_find(name);
	if (x)
		return spec_init(s, x, e);
	char *names = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&names, &len);
	for (size_t i = 0; f && i < nexperiments; i++)
		fprintf(f, "%s%s", i ? ", " : "", experiments[i].name);
	if (f)
		fclose(f);
	msg_set(e, "skv: unknown experiment '%s' (expected %s)", name, names ? names : "");
	free(names);
	return SKV_EINVAL;
}
