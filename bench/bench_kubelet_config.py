"""How long assembling a node's effective kubelet configuration takes.

Three shapes from tests/formats/data/kubelet_configs: a kubeadm node through its systemd
unit (unit, drop-in, two env files, config.yaml), k3s drop-ins, and a kubeadm file alone.
Prints the median and best of N runs of ``load_effective_config`` for each.

    python bench/bench_kubelet_config.py [--runs N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from cpumanager.adapters.kubelet_config_file import load_effective_config  # noqa: E402

DATA = ROOT / "tests" / "formats" / "data" / "kubelet_configs"
NODE = DATA / "kubeadm-node"

CASES: dict[str, Callable[[], object]] = {
    "kubeadm node via systemd unit": lambda: load_effective_config(
        systemd_unit=NODE / "usr/lib/systemd/system/kubelet.service", root=NODE
    ),
    "k3s drop-in directory": lambda: load_effective_config(
        config_dir=DATA / "k3s" / "kubelet.conf.d"
    ),
    "kubeadm config.yaml alone": lambda: load_effective_config(config=DATA / "kubeadm.yaml"),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()
    for name, case in CASES.items():
        times = []
        for _ in range(args.runs):
            start = time.perf_counter()
            case()
            times.append(time.perf_counter() - start)
        print(
            f"{name}: median {statistics.median(times) * 1e3:.2f} ms, "
            f"best {min(times) * 1e3:.2f} ms ({args.runs} runs)"
        )


if __name__ == "__main__":
    main()
