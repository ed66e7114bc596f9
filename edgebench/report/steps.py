"""Where each arm's decode time goes, per call of each decode-loop phase (the grammar
mask, applying it, the keyword guard, the grammar engine's bookkeeping, the model's
forward pass): `compare`'s table under the main one, p50/p99 in microseconds."""

from __future__ import annotations

from rich.markup import escape
from rich.table import Table

from edgebench.backends.step_clock import PHASES
from edgebench.runfolder.records import PhaseSummary, Summary
from edgebench.summary import result_arms

# Captions name what each phase is; the header is the phase's own name.
PHASE_NOTES = {
    "mask": "the grammar engine's allowed tokens (gbnf: llama.cpp's grammar on the logits)",
    "apply": "the allowed tokens' logits and the best of them",
    "guard": "the keyword guard",
    "advance": "the engine taking the chosen token",
    "forced": "the engine finding and taking its forced tokens",
    "sample": "llama.cpp's sampler chain",
    "decode": "llama_decode, the model's forward pass",
}


def step_cells(phase: PhaseSummary | None) -> str:
    """`p50/p99` in µs, whole numbers above 10 µs (the noise of one call)."""
    if phase is None:
        return "-"
    return "/".join(f"{v:.0f}" if v >= 10 else f"{v:.1f}" for v in (phase.p50_us, phase.p99_us))


def step_table(summaries: list[Summary]) -> Table | None:
    """One row per arm that timed its decode loop; None when no arm did (older runs)."""
    arms = [(s, a) for s in summaries for a in result_arms(s) if a.perf.step_times]
    if not arms:
        return None
    timed = {phase for _, arm in arms for phase in arm.perf.step_times}
    phases = [p for p in PHASES if p in timed] + sorted(timed - set(PHASES))
    several_runs = len(summaries) > 1
    several_models = len({arm.model for _, arm in arms}) > 1
    table = Table(title="decode loop, µs p50/p99", title_justify="left")
    if several_runs:
        table.add_column("run", no_wrap=True)
    if several_models:
        table.add_column("model", no_wrap=True)
    table.add_column("constraint", no_wrap=True)
    for phase in phases:
        table.add_column(phase, justify="right", no_wrap=True)
    for summary, arm in arms:
        labels = [escape(summary.run_id)] if several_runs else []
        if several_models:
            labels.append(escape(arm.model))
        cells = [step_cells(arm.perf.step_times.get(p)) for p in phases]
        table.add_row(*labels, escape(arm.constraint), *cells)
    notes = "; ".join(f"{p}: {PHASE_NOTES[p]}" for p in phases if p in PHASE_NOTES)
    table.caption = (
        "µs per call, the median answer's p50/p99 (forced tokens ride in the pass of the "
        f"token before them: one mask and one decode per pass). {notes}."
    )
    return table
