#!/usr/bin/python3
"""make_grade.py - a split-KV decode step computed in numpy's own float16 arithmetic, saved with np.save, for skv grade's interop tests.

  make_grade.py DIR    writes DIR/{q,k,v,splits,partial_out,partial_lse,out,lse}.npy and DIR/grade_expected.txt

Four query heads over two KV heads (query head h reads KV head h // 2), 48 keys, head_dim 16,
three splits [0, 16), [16, 29), [29, 48). Every value is float16 and every operation is one numpy
float16 operation (numpy computes each in float32 and rounds the result to float16): each split
scores its keys with a left-to-right float16 dot product times the float16 scale 1/4, takes the
max, p = exp(s - m), l and the P.V sum by left-to-right float16 additions, o = acc / l and
lse = m + log(l); the merge is FlashAttention's one pass in float16: M = max lse_s,
L = M + log(sum exp(lse_s - M)), out = sum exp(lse_s - L) o_s.

grade_expected.txt has one line per graded item, "ITEM HEAD SPLIT MAX_ABS_ERR" (SPLIT - for the
merged items), the error measured here in float64 against a float64 reference computed from the
stored values (the attention for out, lse and the partials; the float64 merge of the stored
partials for merge_out and merge_lse), as float.hex(). The references are good to about 1e-15,
the errors are float16's, about 1e-4: skv grade's figures must agree to far better than the errors.
Exit status 3 when numpy is missing, so the C test can skip.
"""
import sys

try:
    import numpy as np
except ImportError:
    sys.stderr.write("numpy is not installed (Debian: apt-get install python3-numpy)\n")
    sys.exit(3)

H, HKV, N, D = 4, 2, 48, 16
SPLITS = [0, 16, 29, 48]
F16 = np.float16


def dot16(a, b):
    """Left-to-right float16 dot product: every product and sum rounded to float16."""
    acc = F16(0)
    for x, y in zip(a, b):
        acc = F16(acc + F16(x * y))
    return acc


def sum16(xs):
    acc = F16(0)
    for x in xs:
        acc = F16(acc + x)
    return acc


def split16(q, k, v, scale):
    """One split's partial output and LSE, every step a float16 operation."""
    s = np.array([F16(dot16(q, kj) * scale) for kj in k], dtype=F16)
    m = s.max()
    p = np.exp(s - m)  # float16 in, float16 out
    l = sum16(p)
    acc = np.zeros(D, dtype=F16)
    for pj, vj in zip(p, v):
        acc = acc + pj * vj
    return acc / l, F16(m + np.log(l))


def merge16(o, lse):
    m = lse.max()
    big = F16(m + np.log(sum16(np.exp(lse - m))))
    out = np.zeros(D, dtype=F16)
    for os, ls in zip(o, lse):
        out = out + np.exp(ls - big) * os
    return out, big


def attention64(q, k, v, scale):
    """Float64 reference from the stored values."""
    s = (k.astype(np.float64) @ q.astype(np.float64)) * scale
    m = s.max()
    p = np.exp(s - m)
    return (p @ v.astype(np.float64)) / p.sum(), m + np.log(p.sum())


def merge64(o, lse):
    o, lse = o.astype(np.float64), lse.astype(np.float64)
    m = lse.max()
    w = np.exp(lse - m)
    return (w @ o) / w.sum(), m + np.log(w.sum())


def main(d):
    rng = np.random.default_rng(20250611)
    q = (rng.standard_normal((H, D)) * 0.5).astype(F16)
    k = rng.standard_normal((HKV, N, D)).astype(F16)
    v = rng.standard_normal((HKV, N, D)).astype(F16)
    scale = F16(0.25)  # 1 / sqrt(16), exact
    S = len(SPLITS) - 1
    po = np.zeros((S, H, D), dtype=F16)
    pl = np.zeros((S, H), dtype=F16)
    out = np.zeros((H, D), dtype=F16)
    lse = np.zeros(H, dtype=F16)
    lines = []
    for h in range(H):
        g = h // (H // HKV)
        for s in range(S):
            lo, hi = SPLITS[s], SPLITS[s + 1]
            po[s, h], pl[s, h] = split16(q[h], k[g, lo:hi], v[g, lo:hi], scale)
        out[h], lse[h] = merge16(po[:, h], pl[:, h])
        ref_o, ref_l = attention64(q[h], k[g], v[g], 0.25)
        mo, ml = merge64(po[:, h], pl[:, h])
        lines.append("out %d - %s" % (h, float(np.abs(out[h] - ref_o).max()).hex()))
        lines.append("lse %d - %s" % (h, float(abs(float(lse[h]) - ref_l)).hex()))
        lines.append("merge_out %d - %s" % (h, float(np.abs(out[h] - mo).max()).hex()))
        lines.append("merge_lse %d - %s" % (h, float(abs(float(lse[h]) - ml)).hex()))
        for s in range(S):
            lo, hi = SPLITS[s], SPLITS[s + 1]
            ro, rl = attention64(q[h], k[g, lo:hi], v[g, lo:hi], 0.25)
            lines.append("partial_out %d %d %s" % (h, s, float(np.abs(po[s, h] - ro).max()).hex()))
            lines.append("partial_lse %d %d %s" % (h, s, float(abs(float(pl[s, h]) - rl)).hex()))
    for name, a in (("q", q), ("k", k), ("v", v), ("partial_out", po), ("partial_lse", pl), ("out", out),
                    ("lse", lse), ("splits", np.array(SPLITS, dtype=np.int64))):
        np.save("%s/%s.npy" % (d, name), a)
    with open(d + "/grade_expected.txt", "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
