"""Which figures a run's views lead with and what they are called: the preferred
accuracy metric, the task's headline scores, each figure's label as its family declares
it. Shared by the views (report/) and what they show (the sweep, the pick)."""

from __future__ import annotations

from edgebench.metrics import FAMILIES

# A figure's label in tables and cards, as its family declares it (metrics/__init__.py);
# the consistency summary's own figure beside them.
METRIC_LABELS = {
    **{figure: label for info in FAMILIES.values() for figure, label in info.labels.items()},
    "sted_mean": "STED mean",
}
# The accuracy metrics plotted when a run has them, most telling first; a run with
# other metric families plots its first ones instead.
PREFERRED_METRICS = ("field_f1", "schema_compliance", "json_exact", "valid_json")
# At most this many of the task's figures are headline scores, in the family's order;
# parts of a figure already shown (F1's precision and recall) are not.
HEADLINE_SCORES = 3
SUPPORTING_SCORES = ("field_precision", "field_recall")


def headline_scores(names: list[str]) -> list[str]:
    """The task's headline figures among `names` (the task's own, in table order)."""
    return [n for n in names if n not in SUPPORTING_SCORES][:HEADLINE_SCORES]


def metric_label(name: str) -> str:
    family, _, metric = name.rpartition(".")
    label = METRIC_LABELS.get(metric, metric)
    return f"{family} {label}" if family else label
