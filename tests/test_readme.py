"""The README's examples run as written."""

import doctest
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_examples():
    result = doctest.testfile(
        str(README), module_relative=False, optionflags=doctest.ELLIPSIS, verbose=False
    )
    assert result.attempted > 5
    assert result.failed == 0
