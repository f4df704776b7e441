#!/usr/bin/python3
"""make_safetensors.py - a minimal .safetensors writer and reader in Python's standard library, for skv's interop tests.

  make_safetensors.py DIR          writes DIR/interop.safetensors and DIR/st_expected.txt
  make_safetensors.py check FILE   reads FILE strictly, prints its tensors (manifest lines)

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


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "check":
        check(sys.argv[2])
    elif len(sys.argv) == 2:
        write(sys.argv[1])
    else:
        sys.exit(__doc__)
