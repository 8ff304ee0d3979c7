"""Every command's table (and ``-o wide``) at 80 columns on the fixtures: nothing cut with
an ellipsis, no line past 80 columns unless it ends in one word too long to break (a long
path after a short label, printed whole so it can be copied)."""

from __future__ import annotations

import pytest

from tests.cli.fixture_runs import Case, prepared, table_cases
from tests.cli.runner import run_main

WIDTH = 80


def _problems(text: str) -> list[str]:
    found = []
    for line in text.splitlines():
        if "\u2026" in line:
            found.append(f"cut: {line!r}")
        text = line.rstrip()
        if len(text) > WIDTH and not _one_long_word(text):
            found.append(f"{len(text)} columns: {line!r}")
    return found


def _one_long_word(line: str) -> bool:
    """A short label (at most 30 columns) and then one word longer than 40 columns."""
    head, _, last = line.rpartition(" ")
    return len(last) > 40 and len(head) <= 30


@pytest.mark.parametrize("case", table_cases(), ids=lambda c: c.name)
@pytest.mark.parametrize("fmt", ["table", "wide"])
def test_tables_fit_80_columns(
    case: Case, fmt: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    if fmt not in case.formats:
        pytest.skip(f"{case.command} has no -o {fmt}")
    where = prepared(tmp_path_factory)
    result = run_main(case.argv(where, fmt), env={"COLUMNS": str(WIDTH)})
    assert result.exit_code in case.codes, (result.exit_code, result.stderr)
    assert result.output.strip(), "no table printed"
    assert not _problems(result.output + result.stderr), _problems(result.output + result.stderr)
