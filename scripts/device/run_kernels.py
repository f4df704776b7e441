#!/usr/bin/env python3
"""run_kernels.py - run PyTorch's real attention kernels on problems written by `skv export` and save what they return for `skv grade --identify`.

usage: run_kernels.py IN.safetensors... --out=DIR [--backends=flash,efficient,flex] [--device=cuda]
                      [--dry-run]

Each IN is a file `skv export --out=IN.safetensors` wrote: q [H, d], k and v [Hkv, n, d] in the
input format (bf16, fp16 or fp32) and the softmax scale in its metadata (a C hexadecimal float).
For each backend the script runs one decode step (batch 1, one query per head) on exactly those
values and writes DIR/STEM.BACKEND.safetensors holding q, k, v (the same bytes), out [H, d] in the
kernel's output type and lse [H] (float32, as the kernel returns it), with metadata naming the
backend, the API called, the GPU, the driver, PyTorch and CUDA versions and the date (UTC). Then,
on any machine:
    skv grade DIR/STEM.flash.safetensors --identify --split-counts=1,2,4,8,16,32 --layout=fa2
(the kernels choose their own splits and do not return their partials: identify tries the counts).

The backends and the APIs they call (no network, nothing downloaded):
  flash      torch.ops.aten._scaled_dot_product_flash_attention(q, k, v, dropout_p=0.0,
             is_causal=False, return_debug_mask=False, scale=s): the FlashAttention 2 kernels
             vendored in PyTorch; returns (out, logsumexp, ...), logsumexp [B, H, Lq] float32.
             fp16 and bf16 only. K and V are repeated to H heads for GQA (the same values, so
             each head's arithmetic is that of the GQA kernel; the split heuristic may differ).
  efficient  torch.ops.aten._scaled_dot_product_efficient_attention(q, k, v, None, True,
             dropout_p=0.0, is_causal=False, scale=s): the memory-efficient (xformers-derived
             CUTLASS) kernel with compute_log_sumexp; its log_sumexp may be padded along Lq
             (to a multiple of 32): the first entry is kept.
  flex       torch.compile(torch.nn.attention.flex_attention.flex_attention)(q, k, v, scale=s,
             enable_gqa=H != Hkv, return_lse=True) (or return_aux=AuxRequest(lse=True) where
             return_lse is gone): FlexAttention, whose Lq = 1 call takes the flex_decoding
             Triton template, split over the keys; returns (out, lse [B, H, Lq]).
  python     no GPU and no PyTorch: the float64 attention of the stored values rounded once to
             the input format (out) and to float32 (lse), for testing this script's file
             handling on a CPU (skv grade finds out's error equal to its floor).
The LSEs are saved as the APIs return them; skv grade tells their base from the values.

--dry-run checks every input and prints what would run, writing nothing. Exit status: 0 done,
2 bad usage or a bad input file (one line on stderr, nothing run), 3 when some backend could not
run here (PyTorch or CUDA missing, a format the kernel does not take: one line each on stderr;
the others ran and their files are written).
"""
import datetime
import json
import math
import os
import struct
import subprocess
import sys

SIZES = {"F16": 2, "BF16": 2, "F32": 4, "F64": 8, "I64": 8}
BACKENDS = ("flash", "efficient", "flex", "python")
HEADER_CAP = 100_000_000  # the reference implementation's MAX_HEADER_SIZE


class Refused(Exception):
    """A bad input or argument: exit status 2."""


class CannotRun(Exception):
    """A backend this machine cannot run: exit status 3."""


# ------------------------------------------------------------ safetensors


def read_safetensors(path):
    """(tensors {name: (dtype, shape, bytes)}, metadata {str: str}), strictly: the header size,
    the JSON object, offsets that tile the data buffer (huggingface/safetensors README, Format)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise Refused("%s: cannot read: %s" % (path, e.strerror))
    if len(data) < 8:
        raise Refused("%s: truncated: %d bytes, not even the 8-byte header size" % (path, len(data)))
    n = struct.unpack("<Q", data[:8])[0]
    if n > HEADER_CAP or 8 + n > len(data):
        raise Refused("%s: the header size %d exceeds the cap or the file (%d bytes)" % (path, n, len(data)))
    try:
        header = json.loads(data[8:8 + n].decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise Refused("%s: the header is not JSON: %s" % (path, e))
    if not isinstance(header, dict):
        raise Refused("%s: the header is not a JSON object" % path)
    meta = header.pop("__metadata__", {}) or {}
    buf = data[8 + n:]
    tensors, at = {}, 0
    for name, e in sorted(header.items(), key=lambda kv: tuple(kv[1].get("data_offsets", [0, 0]))):
        if not isinstance(e, dict) or set(e) != {"dtype", "shape", "data_offsets"}:
            raise Refused("%s: tensor %s: not a {dtype, shape, data_offsets} entry" % (path, name))
        b, end = e["data_offsets"]
        count = math.prod(e["shape"])
        size = SIZES.get(e["dtype"], 1)
        if b != at or end - b != count * size:
            raise Refused("%s: tensor %s: data_offsets [%d, %d] do not tile the buffer" % (path, name, b, end))
        tensors[name] = (e["dtype"], list(e["shape"]), buf[b:end])
        at = end
    if at != len(buf):
        raise Refused("%s: %d bytes of the data buffer unaccounted for" % (path, len(buf) - at))
    return tensors, meta


def write_safetensors(path, tensors, meta):
    """tensors: [(name, dtype, shape, bytes)]; the header padded to 8 bytes; written aside and
    renamed, so the file appears whole or not at all."""
    header, buf = {"__metadata__": meta}, b""
    for name, dtype, shape, raw in tensors:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(buf), len(buf) + len(raw)]}
        buf += raw
    text = json.dumps(header).encode("utf-8")
    text += b" " * (-len(text) % 8)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + buf)
    os.replace(tmp, path)


# ---------------------------------------------------------------- problem


def load_problem(path):
    """q, k, v of an skv export file, their shapes checked, and the softmax scale."""
    tensors, meta = read_safetensors(path)
    for name in ("q", "k", "v"):
        if name not in tensors:
            raise Refused("%s: tensor %s: missing (is this a file skv export wrote?)" % (path, name))
    (qt, qs, _), (kt, ks, _), (vt, vs, _) = tensors["q"], tensors["k"], tensors["v"]
    if len(qs) != 2 or len(ks) != 3 or vs != ks or ks[2] != qs[1] or qs[0] % ks[0]:
        raise Refused("%s: tensor k: shapes q %s, k %s, v %s where [H, d], [Hkv, n, d] with Hkv dividing H "
                      "are expected" % (path, qs, ks, vs))
    if not (qt == kt == vt) or qt not in ("F16", "BF16", "F32"):
        raise Refused("%s: tensor q: dtypes %s, %s, %s: one of F16, BF16, F32 is expected" % (path, qt, kt, vt))
    try:
        scale = float.fromhex(meta["scale"])
    except (KeyError, ValueError):
        scale = 1.0 / math.sqrt(qs[1])
    return {"path": path, "tensors": tensors, "meta": meta, "dtype": qt, "H": qs[0], "Hkv": ks[0], "n": ks[1],
            "d": qs[1], "scale": scale}


def decode(dtype, raw):
    """The values of raw bytes of dtype, exactly, as Python floats."""
    if dtype == "BF16":
        return [struct.unpack("<f", b"\0\0" + raw[i:i + 2])[0] for i in range(0, len(raw), 2)]
    code = {"F16": "e", "F32": "f", "F64": "d"}[dtype]
    size = SIZES[dtype]
    return [struct.unpack("<" + code, raw[i:i + size])[0] for i in range(0, len(raw), size)]


def round_to(x, p):
    """x rounded once to p significant bits, to nearest even (normal range): exact scaling by a
    power of two, then Python's round, which rounds half to even."""
    if x == 0 or not math.isfinite(x):
        return x
    e = math.frexp(x)[1]
    return math.ldexp(round(math.ldexp(x, p - e)), e - p)


def encode(dtype, vals):
    if dtype == "BF16":  # rounded to 8 bits first, then exact in float32: its top half
        return b"".join(struct.pack("<f", round_to(v, 8))[2:] for v in vals)
    code = {"F16": "e", "F32": "f", "F64": "d"}[dtype]
    return b"".join(struct.pack("<" + code, v) for v in vals)


# ---------------------------------------------------------------- backends


def python_reference(prob):
    """float64 attention of the stored values: out rounded once to the input format, lse to f32."""
    t = prob["tensors"]
    H, Hkv, n, d = prob["H"], prob["Hkv"], prob["n"], prob["d"]
    q, k, v = (decode(t[x][0], t[x][2]) for x in ("q", "k", "v"))
    out, lse = [], []
    for h in range(H):
        g = h // (H // Hkv)
        qh = q[h * d:(h + 1) * d]
        s = [prob["scale"] * math.fsum(a * b for a, b in zip(qh, k[(g * n + j) * d:(g * n + j + 1) * d]))
             for j in range(n)]
        m = max(s)
        p = [math.exp(x - m) for x in s]
        tot = math.fsum(p)
        out += [math.fsum(p[j] * v[(g * n + j) * d + i] for j in range(n)) / tot for i in range(d)]
        lse.append(m + math.log(tot))
    return encode(prob["dtype"], out), prob["dtype"], encode("F32", lse), "float64 attention, rounded once"


def torch_module():
    try:
        import torch  # noqa: F401 (PyTorch is needed for the GPU backends only)
    except ImportError:
        raise CannotRun("PyTorch is not importable here: only --backends=python runs without it")
    return torch


TORCH_DTYPE = {"F16": "float16", "BF16": "bfloat16", "F32": "float32"}
ST_DTYPE = {"float16": "F16", "bfloat16": "BF16", "float32": "F32"}


def to_torch(torch, prob, name, device):
    dtype, shape, raw = prob["tensors"][name]
    x = torch.frombuffer(bytearray(raw), dtype=getattr(torch, TORCH_DTYPE[dtype])).reshape(shape)
    # [H, d] -> [1, H, 1, d]; [Hkv, n, d] -> [1, Hkv, n, d]: batch 1, one query per head
    return (x.unsqueeze(0).unsqueeze(2) if name == "q" else x.unsqueeze(0)).to(device)


def to_bytes(torch, x):
    x = x.detach().contiguous().cpu()
    return bytes(x.view(torch.uint8).flatten().tolist()), ST_DTYPE[str(x.dtype).replace("torch.", "")]


def run_torch(prob, backend, device):
    torch = torch_module()
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise CannotRun("CUDA is not available to PyTorch here (%s)" % torch.__version__)
    if backend == "flash" and prob["dtype"] == "F32":
        raise CannotRun("the flash backend takes fp16 and bf16 only; this problem is fp32")
    q, k, v = (to_torch(torch, prob, x, device) for x in ("q", "k", "v"))
    rep = prob["H"] // prob["Hkv"]
    s = prob["scale"]
    with torch.no_grad():
        if backend == "flash":
            kr, vr = (x.repeat_interleave(rep, dim=1) for x in (k, v))
            res = torch.ops.aten._scaled_dot_product_flash_attention(q, kr, vr, dropout_p=0.0, is_causal=False,
                                                                      return_debug_mask=False, scale=s)
            out, lse, api = res[0], res[1], "aten._scaled_dot_product_flash_attention"
        elif backend == "efficient":
            kr, vr = (x.repeat_interleave(rep, dim=1) for x in (k, v))
            res = torch.ops.aten._scaled_dot_product_efficient_attention(q, kr, vr, None, True, dropout_p=0.0,
                                                                          is_causal=False, scale=s)
            out, lse, api = res[0], res[1][..., :1], "aten._scaled_dot_product_efficient_attention"
        else:
            out, lse, api = run_flex(torch, q, k, v, s, rep > 1)
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    ob, odt = to_bytes(torch, out.reshape(prob["H"], prob["d"]))
    lb, _ = to_bytes(torch, lse.reshape(prob["H"]).float())
    return ob, odt, lb, api


def run_flex(torch, q, k, v, s, gqa):
    from torch.nn.attention import flex_attention as fa
    compiled = torch.compile(fa.flex_attention)
    try:
        out, lse = compiled(q, k, v, scale=s, enable_gqa=gqa, return_lse=True)
        return out, lse, "torch.compile(flex_attention)(..., return_lse=True)"
    except TypeError:  # newer releases: return_aux=AuxRequest(lse=True)
        out, aux = compiled(q, k, v, scale=s, enable_gqa=gqa, return_aux=fa.AuxRequest(lse=True))
        return out, aux.lse, "torch.compile(flex_attention)(..., return_aux=AuxRequest(lse=True))"


def machine(backend, device):
    """What ran: the GPU, driver, PyTorch and CUDA versions, the date (UTC)."""
    info = {"date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")}
    if backend == "python":
        info["device"] = "cpu (python float64 reference)"
        return info
    torch = torch_module()
    info["torch"] = torch.__version__
    info["cuda"] = str(torch.version.cuda)
    info["device"] = torch.cuda.get_device_name(0) if device.startswith("cuda") else device
    try:
        info["driver"] = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                                        capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        info["driver"] = "unknown (nvidia-smi did not answer)"
    return info


# ----------------------------------------------------------------- main


def parse(argv):
    ins, out, backends, device, dry = [], None, ["flash", "efficient", "flex"], "cuda", False
    for a in argv:
        if a.startswith("--out="):
            out = a[6:]
        elif a.startswith("--backends="):
            backends = [b for b in a[11:].split(",") if b]
            bad = [b for b in backends if b not in BACKENDS]
            if bad or not backends:
                raise Refused("--backends=%s: expected some of %s" % (a[11:], ",".join(BACKENDS)))
        elif a.startswith("--device="):
            device = a[9:]
        elif a == "--dry-run":
            dry = True
        elif a in ("-h", "--help"):
            print(__doc__)
            sys.exit(0)
        elif a.startswith("-"):
            raise Refused("unknown option %s (see --help)" % a)
        else:
            ins.append(a)
    if not ins:
        raise Refused("no input: give the .safetensors files skv export wrote")
    if not out and not dry:
        raise Refused("no --out=DIR given")
    return ins, out, backends, device, dry


def run_one(prob, backend, out, device):
    if backend == "python":
        ob, odt, lb, api = python_reference(prob)
    else:
        ob, odt, lb, api = run_torch(prob, backend, device)
    t = prob["tensors"]
    tensors = [(x, t[x][0], t[x][1], t[x][2]) for x in ("q", "k", "v")]
    tensors += [("out", odt, [prob["H"], prob["d"]], ob), ("lse", "F32", [prob["H"]], lb)]
    meta = {"backend": backend, "api": api, "source": os.path.basename(prob["path"]), "scale": prob["meta"].get(
        "scale", float.hex(prob["scale"]))}
    meta.update(machine(backend, device))
    stem = os.path.basename(prob["path"])
    stem = stem[:-len(".safetensors")] if stem.endswith(".safetensors") else stem
    path = os.path.join(out, "%s.%s.safetensors" % (stem, backend))
    write_safetensors(path, tensors, meta)
    return path


def main(argv):
    try:
        ins, out, backends, device, dry = parse(argv)
        probs = [load_problem(p) for p in ins]
        if dry:
            for p in probs:
                print("%s: %d query heads over %d KV heads, %d keys, head_dim %d, %s, scale %r: would run %s" % (
                    p["path"], p["H"], p["Hkv"], p["n"], p["d"], p["dtype"], p["scale"], ", ".join(backends)))
            return 0
        os.makedirs(out, exist_ok=True)
        status = 0
        for p in probs:
            for b in backends:
                try:
                    print(run_one(p, b, out, device), flush=True)
                except CannotRun as e:  # the other backends and problems still run
                    sys.stderr.write("run_kernels.py: %s: %s: %s\n" % (p["path"], b, e))
                    status = 3
        return status
    except Refused as e:
        sys.stderr.write("run_kernels.py: %s\n" % e)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
