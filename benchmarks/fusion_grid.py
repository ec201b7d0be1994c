"""The fusions ``hybrid_eval.py --tune`` tries: the adaptive preset's parameters over a grid around its values."""

from __future__ import annotations

import itertools

from codelex.rank.fusion import Adaptation, Fusion


def candidates() -> dict[str, Fusion]:
    out = {}
    for base, sharp, named, sim, (at, dis), same in itertools.product(
            (0.8, 0.9, 1.0), (0.7, 0.9, 1.1), (0.0, -0.4), (0.0, 1.0, 2.0), ((1, 0.0), (1, 0.2), (1, 0.4), (0, 0.2)),
            (1.0, 0.5)):
        name = f"b{base}/s{sharp}/n{named}/v{sim}/d{at}:{dis}/f{same}"
        out[name] = Fusion(name, {"prose": (0.7, 0.3), "symbol": (0.1, 0.9), "defined": (0.1, 0.9)}, 5, 100,
                           Adaptation(base=base, sharpness_slope=sharp, named=named, similarity_slope=sim,
                                      disagree_at=at, disagree=dis), same_file=same)
    return out
