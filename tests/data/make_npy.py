#!/usr/bin/python3
"""make_npy.py - .npy files written by numpy itself, for skv's reader tests; or numpy's view of a file skv wrote.

  make_npy.py DIR          writes the files into DIR and DIR/npy_expected.txt
  make_npy.py check FILE   prints numpy's reading of FILE (one manifest line)

A manifest line is: FILE RAW DESCR RANK D1..DRANK V1..VCOUNT, the values in
C order as float.hex() of numpy's own values (bf16 and fp8 held in unsigned
ints decoded here, from the formats' definitions, independently of skv).
Exit status 3 when numpy is missing, so the C test can skip.
"""
import sys

try:
    import numpy as np
except ImportError:
    sys.stderr.write("numpy is not installed (Debian: apt-get install python3-numpy)\n")
    sys.exit(3)

from numpy.lib import format as npf

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from ofp8 import fp8  # noqa: E402


def bf16(u):
    """bfloat16 patterns (any int array) to float64: the top half of a float32."""
    return (u.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def values(a, raw):
    flat = np.ascontiguousarray(a).reshape(-1)
    if raw == "bf16":
        return [float(x) for x in bf16(flat.astype(np.uint16))]
    if raw in ("e4m3", "e5m2"):
        eb, mb = (4, 3) if raw == "e4m3" else (5, 2)
        return [fp8(int(x) & 0xFF, eb, mb, raw == "e4m3") for x in flat]
    return [float(x) for x in flat]


def line(name, raw, a):
    vals = values(a, raw)
    return " ".join([name, raw, a.dtype.str, str(a.ndim)] + [str(d) for d in a.shape] +
                    [v.hex() for v in vals])


def arrays():
    """(file, raw, array, version); version None is np.save's choice (1.0)."""
    rng = np.random.default_rng(20240611)
    f4 = np.array([[1.5, -2.25, 3e-3], [1e30, -0.0, 2.0**-149]], dtype=np.float32)
    f8 = rng.standard_normal((3, 4))
    # float16 values computed with numpy's own float16 arithmetic: a split-KV
    # style partial merge, every operation rounded to float16 by numpy.
    x = rng.standard_normal(48).astype(np.float16)
    y = rng.standard_normal(48).astype(np.float16)
    lse1, lse2 = x * np.float16(0.5), y * np.float16(0.25)
    m = np.maximum(lse1, lse2)
    w1, w2 = np.exp(lse1 - m), np.exp(lse2 - m)
    merged = (w1 * x + w2 * y) / (w1 + w2)
    tiny = (x[:8] * np.float16(2.0**-20)).astype(np.float16)  # subnormals
    f2 = np.concatenate([merged, tiny]).reshape(7, 8)
    assert f2.dtype == np.float16
    special = np.array([0.0, -0.0, 2.0**-24, 65504.0, np.inf, -np.inf, np.nan], dtype=np.float16)
    b = (np.array([1.0, -2.5, 3.140625, 1e-40, 6e37, -0.0], dtype=np.float32)
         .view(np.uint32) >> 16).astype(np.uint16)
    return [
        ("v1_f4.npy", "none", f4, None),
        ("v2_f8.npy", "none", f8, (2, 0)),
        ("v3_f2.npy", "none", f2, (3, 0)),
        ("be_f4.npy", "none", rng.standard_normal((3, 4)).astype(">f4"), None),
        ("be_f8_fortran.npy", "none", np.asfortranarray(rng.standard_normal((2, 3, 4))).astype(">f8", order="F"), None),
        ("fortran_f8.npy", "none", np.asfortranarray(np.arange(24.0).reshape(2, 3, 4) * 0.5), None),
        ("fortran_f2.npy", "none", np.asfortranarray(f2), None),
        ("f16_arith.npy", "none", merged, None),
        ("f2_special.npy", "none", special, None),
        ("bf16_u2.npy", "bf16", b, None),
        ("bf16_be_i2.npy", "bf16", b.view(np.int16).astype(">i2"), None),
        ("e4m3_u1.npy", "e4m3", np.arange(256, dtype=np.uint8).reshape(16, 16), None),
        ("e5m2_i1.npy", "e5m2", np.arange(256, dtype=np.uint8).view(np.int8), None),
        ("scalar.npy", "none", np.array(3.25), None),
        ("empty.npy", "none", np.zeros((0, 3), dtype=np.float32), None),
        ("splits_i8.npy", "none", np.array([0, 5, 11, 16], dtype=np.int64), None),
    ]


def write_all(d):
    lines = []
    for name, raw, a, version in arrays():
        path = d + "/" + name
        if version is None:
            np.save(path, a)
        else:
            with open(path, "wb") as f:
                npf.write_array(f, a, version=version)
        back = np.load(path)  # what numpy itself reads from the file
        assert back.dtype == a.dtype and back.shape == a.shape
        lines.append(line(name, raw, back))
    with open(d + "/npy_expected.txt", "w") as f:
        f.write("\n".join(lines) + "\n")


def check(path, raw):
    with open(path, "rb") as f:
        major, minor = npf.read_magic(f)
        shape, fortran, dtype = npf._read_array_header(f, (major, minor))
    a = np.load(path)
    print(line(path.rsplit("/", 1)[-1], raw, a) + (" fortran" if fortran else ""))


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "check":
        check(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else "none")
    elif len(sys.argv) == 2:
        write_all(sys.argv[1])
    else:
        sys.exit(__doc__)
