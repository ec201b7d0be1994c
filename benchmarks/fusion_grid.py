"""The fusions ``hybrid_eval.py --tune`` tries: the adaptive preset's parameters over a grid."""

from __future__ import annotations

import itertools

from codelex.rank.fusion import Adaptation, Fusion


def candidates() -> dict[str, Fusion]:
    out = {}
    for k, prose, named, ident, (dis_at, dis), slope in itertools.product(
            (5, 10, 20), (0.5, 0.6, 0.7, 0.8, 0.9), (None, 0.3, 0.5), (0.1, 0.25),
            ((0, 0.0), (1, 0.15), (1, -0.15), (2, 0.25), (2, -0.25)), (0.0, 2.0, -2.0)):
        name = f"k{k}/p{prose}/n{named}/i{ident}/d{dis_at}:{dis:+}/m{slope:+}"
        out[name] = Fusion(name, {"prose": (prose, 1 - prose), "symbol": (ident, 1 - ident),
                                  "defined": (ident, 1 - ident)}, k, 100,
                           Adaptation(named=named, disagree_at=dis_at, disagree=dis, margin_slope=slope))
    return out
