"""ofp8.py - the two OCP 8-bit float formats decoded from their definition, for the test data scripts (standard library only)."""
import math


def fp8(b, ebits, mbits, fn):
    """The value of pattern b, per the OCP 8-bit Floating Point Specification
    (OFP8) rev. 1.0, tables 1-2: bias 2^(ebits-1) - 1; E4M3 (fn: ebits 4) has
    no infinity and only S.1111.111 is NaN; E5M2 follows IEEE 754."""
    sign = -1.0 if b & 0x80 else 1.0
    emask, mmask = (1 << ebits) - 1, (1 << mbits) - 1
    e, m = (b >> mbits) & emask, b & mmask
    bias = (1 << (ebits - 1)) - 1
    if fn and e == emask and m == mmask:
        return math.nan
    if not fn and e == emask:
        return sign * math.inf if m == 0 else math.nan
    if e == 0:
        return sign * math.ldexp(m, 1 - bias - mbits)
    return sign * math.ldexp(m + (1 << mbits), e - bias - mbits)
