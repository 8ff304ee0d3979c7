"""`cpumanager extender`'s options: refused before anything is served."""

from __future__ import annotations

import pytest

from tests.cli.runner import run_main


@pytest.mark.parametrize(
    ("argv", "code", "says"),
    [
        (["--workers", "0"], 2, "--workers"),
        (["--workers", "many"], 2, "--workers"),
        (["--listen", "nowhere"], 1, "--listen 'nowhere' is not HOST:PORT"),
    ],
    ids=["zero workers", "workers not a number", "bad listen"],
)
def test_bad_options_are_refused(argv: list[str], code: int, says: str) -> None:
    result = run_main(["extender", *argv])
    assert result.exit_code == code
    assert says in result.stderr


def test_help_names_the_workers_option() -> None:
    result = run_main(["extender", "--help"])
    assert result.exit_code == 0
    assert "--workers" in result.output
