#!/usr/bin/python3
"""make_safetensors.py - a minimal .safetensors writer and reader in Python's standard library, for skv's interop tests.

  make_safetensors.py DIR          writes DIR/interop.safetensors and DIR/st_expected.txt
  make_safetensors.py check FILE   reads FILE strictly, prints its tensors (manifest lines)
  make_safetensors.py grade DIR    writes DIR/grade.safetensors, a decode step for skv grade (below)

Written from the format's description (huggingface/safetensors README.md,
"Format"): an 8-byte little-endian header size N, N bytes of UTF-8 JSON
{"NAME": {"dtype", "shape", "data_offsets": [BEGIN, END]}, "__metadata__":
{str: str}}, then the byte buffer the offsets index, little-endian, C order.
A manifest line: NAMEHEX DTYPE RANK D1..DRANK V1..VCOUNT, NAMEHEX the name's
UTF-8 bytes in hex, the values float.hex(); metadata lines: "meta KEYHEX VALHEX".
"""
import json
import math
import struct
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from ofp8 import fp8  # noqa: E402

SIZES = {"F16": 2, "BF16": 2, "F32": 4, "F64": 8, "F8_E4M3": 1, "F8_E5M2": 1,
         "I8": 1, "I16": 2, "I32": 4, "I64": 8, "U8": 1, "U16": 2, "U32": 4, "U64": 8}
INTS = {"I8": "<b", "I16": "<h", "I32": "<i", "I64": "<q",
        "U8": "<B", "U16": "<H", "U32": "<I", "U64": "<Q"}


def decode(dtype, raw):
    n = SIZES[dtype]
    out = []
    for i in range(0, len(raw), n):
        c = raw[i:i + n]
        if dtype == "F16":
            out.append(struct.unpack("<e", c)[0])
        elif dtype == "BF16":
            out.append(struct.unpack("<f", b"\0\0" + c)[0])
        elif dtype == "F32":
            out.append(struct.unpack("<f", c)[0])
        elif dtype == "F64":
            out.append(struct.unpack("<d", c)[0])
        elif dtype == "F8_E4M3":
            out.append(fp8(c[0], 4, 3, True))
        elif dtype == "F8_E5M2":
            out.append(fp8(c[0], 5, 2, False))
        else:
            out.append(float(struct.unpack(INTS[dtype], c)[0]))
    return out


def encode(dtype, vals):
    if dtype == "F16":
        return b"".join(struct.pack("<e", v) for v in vals)
    if dtype == "BF16":  # the values chosen are exact in bf16: keep the top half
        return b"".join(struct.pack("<f", v)[2:] for v in vals)
    if dtype in ("F32", "F64"):
        return b"".join(struct.pack("<f" if dtype == "F32" else "<d", v) for v in vals)
    if dtype.startswith("F8"):
        return bytes(vals)  # bit patterns
    return b"".join(struct.pack(INTS[dtype], v) for v in vals)


def manifest(name, dtype, shape, vals):
    return " ".join([name.encode("utf-8").hex(), dtype, str(len(shape))] +
                    [str(d) for d in shape] + [float(v).hex() for v in vals])


def tensors():
    """(name, dtype, shape, stored values: numbers, or bit patterns for F8)."""
    return [
        ("q", "F16", [2, 3], [1.0, -0.5, 65504.0, 2.0**-24, -0.0, 0.333251953125]),
        ("k.bf16", "BF16", [4], [1.0, -2.5, 3.140625, 2.0**-133]),
        ("v", "F32", [2, 2], [1.5, -2.0**-149, 3.4028234663852886e38, 0.1000000014901161]),
        ("out", "F64", [3], [math.pi, -1e-310, 2.0**1023]),
        ("e4", "F8_E4M3", [256], list(range(256))),
        ("e5", "F8_E5M2", [16, 16], list(range(256))),
        ("lse", "F32", [], [-3.75]),
        ("empty", "F32", [0, 4], []),
        ("splits", "I64", [4], [0, 5, 11, -16]),
        ("t\u00eate \U0001F600", "U16", [2], [65535, 7]),
        ("quote\"back\\slash\nnewline", "I8", [1], [-128]),
    ]


def write(d):
    ts = tensors()
    buf, header, lines = b"", {}, []
    # data in reverse order of the JSON keys, so a reader must sort by offsets
    for name, dtype, shape, vals in reversed(ts):
        raw = encode(dtype, vals)
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [len(buf), len(buf) + len(raw)]}
        buf += raw
    ordered = {"__metadata__": {"format": "pt", "note": "line\nbreak \u00e9"}}
    for name, _, _, _ in ts:
        ordered[name] = header[name]
    text = json.dumps(ordered).encode("utf-8")  # ensure_ascii: \u escapes, surrogate pairs
    text += b" " * (-len(text) % 8)  # the reference writer's 8-byte alignment
    with open(d + "/interop.safetensors", "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + buf)
    for name, dtype, shape, vals in ts:
        got = decode(dtype, encode(dtype, vals))
        lines.append(manifest(name, dtype, shape, got))
    for k, v in ordered["__metadata__"].items():
        lines.append("meta " + k.encode().hex() + " " + v.encode().hex())
    with open(d + "/st_expected.txt", "w") as f:
        f.write("\n".join(lines) + "\n")


def no_dups(pairs):
    d = {}
    for k, v in pairs:
        if k in d:
            raise ValueError("duplicate key " + k)
        d[k] = v
    return d


def check(path):
    data = open(path, "rb").read()
    n = struct.unpack("<Q", data[:8])[0]
    assert n <= 100_000_000 and 8 + n <= len(data), "bad header size"
    header = json.loads(data[8:8 + n].decode("utf-8"), object_pairs_hook=no_dups)
    meta = header.pop("__metadata__", {})
    buf = data[8 + n:]
    entries = sorted(header.items(), key=lambda kv: tuple(kv[1]["data_offsets"]))
    at = 0
    for name, e in entries:
        assert set(e) == {"dtype", "shape", "data_offsets"}, name
        b, end = e["data_offsets"]
        count = math.prod(e["shape"])
        assert b == at and end - b == count * SIZES[e["dtype"]], name
        assert b % SIZES[e["dtype"]] == 0, name + " misaligned"
        at = end
    assert at == len(buf), "buffer not covered"
    assert (8 + n) % 8 == 0, "header not padded to 8"
    for name, e in entries:
        b, end = e["data_offsets"]
        print(manifest(name, e["dtype"], e["shape"], decode(e["dtype"], buf[b:end])))
    for k, v in meta.items():
        print("meta " + k.encode().hex() + " " + v.encode().hex())


def grade(d):
    """A decode step skv did not compute: two query heads over one KV head, 20 keys, head_dim 8,
    q, k, v float16 (struct's "e", round to nearest even), out and lse the float64 attention of
    the stored values rounded once to float32 (struct's "f", to nearest even), so skv grade must
    find out's error equal to its floor (unless the float64 result lies within about 1e-16 of a
    float32 midpoint, which it does not for this seed). Standard library only."""
    import random
    rnd = random.Random(20250612)
    h, n, dim = 2, 20, 8
    half = lambda x: struct.unpack("<e", struct.pack("<e", x))[0]
    q = [[half(rnd.gauss(0, 0.5)) for _ in range(dim)] for _ in range(h)]
    k = [[half(rnd.gauss(0, 1)) for _ in range(dim)] for _ in range(n)]
    v = [[half(rnd.gauss(0, 1)) for _ in range(dim)] for _ in range(n)]
    scale = 1 / math.sqrt(dim)
    out, lse = [], []
    for qh in q:
        s = [scale * math.fsum(a * b for a, b in zip(qh, kj)) for kj in k]
        m = max(s)
        p = [math.exp(x - m) for x in s]
        tot = math.fsum(p)
        out.append([math.fsum(pj * vj[i] for pj, vj in zip(p, v)) / tot for i in range(dim)])
        lse.append(m + math.log(tot))
    ts = [("q", "F16", [h, dim], sum(q, [])), ("k", "F16", [1, n, dim], sum(k, [])),
          ("v", "F16", [1, n, dim], sum(v, [])), ("out", "F32", [h, dim], sum(out, [])),
          ("lse", "F32", [h], lse)]
    buf, header = b"", {}
    for name, dtype, shape, vals in ts:
        raw = encode(dtype, vals)
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(buf), len(buf) + len(raw)]}
        buf += raw
    text = json.dumps(header).encode("utf-8")
    text += b" " * (-len(text) % 8)
    with open(d + "/grade.safetensors", "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + buf)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "check":
        check(sys.argv[2])
    elif len(sys.argv) == 3 and sys.argv[1] == "grade":
        grade(sys.argv[2])
    elif len(sys.argv) == 2:
        write(sys.argv[1])
    else:
        sys.exit(__doc__)
