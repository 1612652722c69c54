"""scripts/compare_solvers.py: first moves solved by each variant in one run, checked against
the shipped table, with totals and ratios."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "compare_solvers.py"


def test_variants_solve_side4_alike_and_print_their_ratios() -> None:
    variants = ["hsearch-no-sets", "hsearch"]
    command = [sys.executable, str(SCRIPT), "--side", "4", "--cells", "a1", "c2", "--variants"]
    done = subprocess.run(
        [*command, *variants, "--table-bits", "16"], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    rows = [line.split() for line in done.stdout.splitlines()]
    cells = {v: {r[1]: r[2] for r in rows if r[0] == v} for v in variants}
    assert cells[variants[0]] == cells[variants[1]]  # the same values, each checked by the script
    assert list(cells[variants[0]]) == ["a1", "c2"]
    totals = [r[1] for r in rows if r[0] == "total"]
    assert totals == variants and "x fewer nodes" in done.stdout
    bad = subprocess.run([*command, "nonsense"], capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and "invalid choice: 'nonsense'" in bad.stderr
