"""Frame-of-reference blocks (``csrc/storage/for_blocks.hpp``), in plain Python: the oracle of the packed
document ids of a saved index."""

from __future__ import annotations

import bisect

BLOCK = 128
PADDING = 8


def pack(values: list[int]) -> tuple[bytes, list[int], list[int], list[int]]:
    """``(bits, block_min, block_width, block_off)`` of ``values`` (uint32), byte for byte as the core packs them.

    Block ``b`` holds values ``[128 b, 128 b + 128)``: its minimum, the bit width of its largest
    difference from it, and where its bits start (in 16-byte units); value ``i`` of the block sits at
    bit ``i * width`` of the block, little-endian.  Eight zero bytes follow the last block.
    """
    mins: list[int] = []
    widths: list[int] = []
    offs: list[int] = []
    out = bytearray()
    for lo in range(0, len(values), BLOCK):
        block = values[lo:lo + BLOCK]
        mn = min(block)
        width = (max(block) - mn).bit_length()
        mins.append(mn)
        widths.append(width)
        offs.append(len(out) // 16)
        if width:
            acc = 0
            for i, v in enumerate(block):
                acc |= (v - mn) << (i * width)
            out += acc.to_bytes(16 * width, "little")
    return bytes(out) + bytes(PADDING), mins, widths, offs


def get(packed: tuple[bytes, list[int], list[int], list[int]], i: int) -> int:
    """Value ``i``."""
    bits, mins, widths, offs = packed
    b, k = divmod(i, BLOCK)
    width = widths[b]
    if not width:
        return mins[b]
    start = offs[b] * 16
    acc = int.from_bytes(bits[start:start + 16 * width], "little")
    return mins[b] + ((acc >> (k * width)) & ((1 << width) - 1))


def lower_bound(values: list[int], begin: int, end: int, d: int) -> int:
    """The first position of the ascending ``values[begin:end]`` holding a value >= ``d`` (``end``: none)."""
    return bisect.bisect_left(values, d, begin, end)


__all__ = ["BLOCK", "PADDING", "get", "lower_bound", "pack"]
