"""Each family's `FamilyInfo` (metrics/__init__.py) names figures the family has: its
labels and headline columns are of its own summary figures (or coverage counts), and the
progress bar's figure is one of its headline columns."""

from __future__ import annotations

import pytest

from edgebench.metrics import FAMILIES, get_family

COVERAGE = ("coverage.compiled", "coverage.refused", "coverage.crashed")


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_a_declaration_names_the_family_s_own_figures(name: str) -> None:
    info = FAMILIES[name]
    family = get_family(name)
    figures = set(family.summary_names)
    assert set(info.labels) <= figures | set(family.score_names)
    assert {key for _, key in info.headline} - set(COVERAGE) <= figures
    assert info.progress is None or info.progress in {key for _, key in info.headline}
