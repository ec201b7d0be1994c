"""The cluster tests: Ray started locally once per test run (2 CPUs, no dashboard), skipped without Ray."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

FILES = {
    "alpha": {
        "src/config.py": "def parse_config(path):\n    return load_settings(path)\n",
        "src/settings.py": "class Settings:\n    def load_settings(self, path):\n        return path\n",
        "README.md": "# alpha\nParse the config and load settings.\n",
    },
    "beta": {
        "lib/router.go": "package lib\nfunc RegisterRoute(path string) {}\nfunc parseRoute() {}\n",
        "lib/router_test.go": "package lib\nfunc TestRegisterRoute() { RegisterRoute(\"/\") }\n",
    },
    "gamma": {
        "index.ts": "export function parseConfig(text: string) { return JSON.parse(text) }\n",
        "server.ts": "import { parseConfig } from './index'\nexport function startServer() {}\n",
        "util/strings.ts": "export const splitWords = (s: string) => s.split(' ')\n",
    },
}


def make_repos(base: Path, files=FILES) -> dict[str, Path]:
    """One directory per unit under ``base``, holding ``files``."""
    out = {}
    for name, tree in files.items():
        for rel, text in tree.items():
            p = base / name / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(text)
        out[name] = base / name
    return out


@pytest.fixture(scope="package")
def ray_local():
    """Ray, started once for the test run on this machine only (never an outside cluster), and stopped after
    these tests: its processes do not linger through the rest of the suite."""
    ray = pytest.importorskip("ray")
    pytest.importorskip("fsspec")
    os.environ.pop("RAY_ADDRESS", None)
    ray.init(address="local", num_cpus=2, include_dashboard=False, namespace="codelex",
             logging_level="ERROR", log_to_driver=False)
    yield ray
    ray.shutdown()
    os.environ.pop("RAY_ADDRESS", None)
