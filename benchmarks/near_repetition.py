"""Would a near-repetition rule end the answers that run to their budget, safely?

Usage: python benchmarks/near_repetition.py RUN_DIR [--constraint none]

The exact loop rule (`LoopRule`: the last tokens repeat with a period of at most 32)
misses answers that write something back *with variations* (SmolLM2 restating the schema
property by property) until the token budget. A looser rule ends an answer when its last
n tokens have already occurred R-1 times in the answer (an n-gram recurring R times).
This replays that rule, for a grid of n and R, on a finished run's own outputs (no model
is run; the default model's vocabulary tokenizes them) and prints per setting:

- how many answers that hit the budget it ends, and the output tokens it saves;
- false positives: answers that ended by themselves (model's end, complete JSON) that it
  would have cut, and expected answers (pretty-printed and compact) it would call loops.

A rule is only safe with zero false positives on both.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from edgebench.backends.llama_cpp import LlamaCppBackend
from edgebench.runfolder.read import read_samples
from edgebench.runner.prepare import model_under_test

NGRAMS = (8, 12, 16, 20, 24, 32)
RECURRENCES = (3, 4, 5, 6)
ENDED_BY_ITSELF = ("stop", "json_complete")


def recurrence_end(ids: list[int], n: int, recurrences: int) -> int | None:
    """Tokens after which the last n tokens have occurred `recurrences` times, if ever."""
    seen: Counter[tuple[int, ...]] = Counter()
    for end in range(n, len(ids) + 1):
        gram = tuple(ids[end - n : end])
        seen[gram] += 1
        if seen[gram] >= recurrences:
            return end
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--constraint", default="none", help="arm whose budget hits to replay")
    args = parser.parse_args()
    samples, _ = read_samples(args.run_dir)
    backend = LlamaCppBackend(str(model_under_test(None).path), 1)
    backend.count_tokens(["x"])  # loads the vocabulary only

    def tokens(text: str) -> list[int]:
        return backend._tokenize(text)[1:]  # without BOS

    runaway = [
        tokens(s.raw_output)
        for s in samples
        if s.constraint == args.constraint and s.finish_reason == "length"
    ]
    ended = [tokens(s.raw_output) for s in samples if s.finish_reason in ENDED_BY_ITSELF]
    answers = {json.dumps(s.expected, ensure_ascii=False) for s in samples}
    answers |= {json.dumps(s.expected, ensure_ascii=False, indent=2) for s in samples}
    expected = [tokens(a) for a in answers]
    runaway_tokens = sum(map(len, runaway))
    print(
        f"{args.run_dir}: {len(runaway)} `{args.constraint}` answers at the budget "
        f"({runaway_tokens} tokens), {len(ended)} answers that ended by themselves "
        f"(all arms), {len(expected)} expected answers (compact and pretty-printed)"
    )
    print(f"{'n':>3} {'R':>2} {'ends':>9} {'saves':>14} {'cuts ended':>11} {'expected':>9}")
    for n in NGRAMS:
        for recurrences in RECURRENCES:
            cuts = [recurrence_end(ids, n, recurrences) for ids in runaway]
            saved = sum(
                len(ids) - cut for ids, cut in zip(runaway, cuts, strict=True) if cut is not None
            )
            fired = sum(cut is not None for cut in cuts)
            cut_ended = sum(recurrence_end(ids, n, recurrences) is not None for ids in ended)
            flagged = sum(recurrence_end(ids, n, recurrences) is not None for ids in expected)
            print(
                f"{n:>3} {recurrences:>2} {fired:>4}/{len(runaway):<4} "
                f"{saved:>6} ({saved / max(runaway_tokens, 1):>4.0%}) "
                f"{cut_ended:>11} {flagged:>9}"
            )


if __name__ == "__main__":
    main()
