"""A fuzzer over the kubelet's configuration sources as read from a node's files (issue 21).

Each case copies the kubeadm node of tests/formats/data/kubelet_configs (its systemd unit
and drop-in, environment files, ``config.yaml``) under a fresh ``--root`` and damages it:
a file's bytes mutated or replaced (deep nesting, huge quantities, odd paths), a file made
a FIFO, a link to ``/dev/zero``, a link out of the root or a directory; the unit's
``EnvironmentFile=`` and ``--config=`` pointed at paths that climb out of the root. Beside
the root lies a canary configuration and environment file (``maxPods: 4242``); a source
read from outside the root shows up as that value. Sometimes a ``/configz`` answer is
given instead. :func:`load_effective_config` must answer, or refuse with a one-line
CpuManagerError; an answer holding the canary is a finding (confinement broken).
"""

from __future__ import annotations

import json
import os
import random
import shutil
from pathlib import Path

from cpumanager.adapters.kubelet_config_file import load_effective_config
from tests.adapters.input_fuzzing import FRAGMENTS
from tests.extender.fuzzing import Tally, case_alarms, judge_case, mutate_bytes

__all__ = ["run"]

NODE = Path(__file__).resolve().parent.parent / "formats/data/kubelet_configs/kubeadm-node"
UNIT = "usr/lib/systemd/system/kubelet.service"
CANARY = 4242
CLIMBS = ["/.." * 30, "/../../..", "/./../", "/etc/../../../../../../../.."]


def _canaries(scratch: Path) -> tuple[Path, Path]:
    config = scratch / "canary.yaml"
    config.write_text(
        "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
        f"maxPods: {CANARY}\n"
    )
    env = scratch / "canary.env"
    env.write_text(f'KUBELET_EXTRA_ARGS="--max-pods={CANARY}"\n')
    return config, env


def _damage(rng: random.Random, root: Path, canaries: tuple[Path, Path]) -> None:
    files = sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink())
    for _ in range(rng.randint(1, 3)):
        if not files:
            return
        path = rng.choice(files)
        choice = rng.random()
        if choice < 0.35:
            path.write_bytes(mutate_bytes(rng, path.read_bytes()))
        elif choice < 0.5:
            fragment = rng.choice(FRAGMENTS)
            with path.open("a", encoding="utf-8", errors="surrogatepass") as handle:
                handle.write(f"\nkubeReserved: {{cpu: {rng.choice(['1e9999', fragment])}}}\n")
        elif choice < 0.7:
            target = rng.choice(canaries)
            climb = rng.choice(CLIMBS) + str(target)
            text = path.read_text(errors="replace")
            if "EnvironmentFile" in text or rng.random() < 0.5:
                text += f"\nEnvironmentFile={climb}\n"
            text += f'\nKUBELET_EXTRA_ARGS="--config={rng.choice(CLIMBS)}{canaries[0]}"\n'
            path.write_text(text)
        else:
            files.remove(path)
            path.unlink()
            kind = rng.random()
            if kind < 0.3:
                os.mkfifo(path)
            elif kind < 0.5:
                path.symlink_to("/dev/zero")
            elif kind < 0.8:
                path.symlink_to(rng.choice(canaries))
            else:
                path.mkdir()


def run(count: int, seed: int, scratch: Path, *, case_seconds: float = 10.0) -> Tally:
    """``count`` damaged nodes under ``scratch`` through :func:`load_effective_config`."""
    rng = random.Random(seed)
    tally = Tally()
    canaries = _canaries(scratch)
    with case_alarms():
        for index in range(count):
            root = scratch / "root"
            shutil.rmtree(root, ignore_errors=True)
            shutil.copytree(NODE, root, symlinks=True)
            _damage(rng, root, canaries)
            configz = None
            if rng.random() < 0.15:
                configz = scratch / "configz.json"
                body = {"kubeletconfig": {"maxPods": 10, "kubeReserved": {"cpu": "1"}}}
                configz.write_bytes(mutate_bytes(rng, json.dumps(body).encode()))

            def attempt(root: Path = root, configz: Path | None = configz) -> tuple[str, str]:
                effective = load_effective_config(
                    systemd_unit=root / UNIT, root=root, configz=configz
                )
                if effective.config.max_pods == CANARY:
                    return "answered", "read a source outside --root"
                return "answered", ""

            judge_case(tally, index, case_seconds, attempt)
    return tally
