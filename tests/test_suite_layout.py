"""The suite's own layout: pytest imports test files by basename (the folders have no
``__init__.py``), so two test files with one name fail the whole collection, yet only when
both folders are collected in one run."""

from collections import Counter
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def test_every_test_file_has_its_own_basename():
    names = Counter(path.name for path in TESTS.rglob("test_*.py"))
    assert [name for name, count in names.items() if count > 1] == []


def test_no_test_imports_the_suite_as_a_package():
    # `tests` is no package of ours: an installed distribution may ship a top-level `tests`
    # (pgx does), which would shadow the folder; the helpers are imported by their own names.
    found = [
        path.name
        for path in TESTS.rglob("*.py")
        if any(
            line.startswith(("from tests.", "import tests"))
            for line in path.read_text().splitlines()
        )
    ]
    assert found == []
