"""What does the keyword guard cost per token, apart from everything else?

Usage: python benchmarks/guard_cost.py [--repeat 5]

Decode-speed rows with and without the guard (benchmarks/constrained_overhead.py) differ
by more than the guard costs, because the guard changes what the model writes and so how
long the answers are. This measures the guard alone: every expected answer of the built-in
EdgeJSON set is tokenized with the default model's vocabulary (no weights loaded) and fed
token by token through `TokenGuard.pick`, the call the decode loops make, over a
whole-vocabulary score array in which the answer's token is the best allowed one.
Printed: microseconds per token (mean over all tokens of all answers, best of --repeat
passes), for schemas with guarded keywords and for all schemas.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import platform
import time

import numpy as np

from edgebench.backends.llama_cpp import LlamaCppBackend
from edgebench.constraints.guard import KeywordGuard, TokenGuard
from edgebench.runfolder.records import RunSettings
from edgebench.runner.prepare import load_examples, model_under_test
from edgebench.system.device import device_info
from edgebench.tasks import get_task


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    task = get_task("edgejson")
    examples, _ = load_examples(task, RunSettings())
    model = model_under_test(None)
    backend = LlamaCppBackend(str(model.path), 1)
    backend.count_tokens(["x"])  # loads the vocabulary only
    n_vocab = backend.L.llama_vocab_n_tokens(backend.vocab)
    buf = ctypes.create_string_buffer(64)

    def piece(token: int) -> bytes:
        return backend._piece(token, buf)

    answers = []
    for example in examples:
        guard = KeywordGuard(example.schema)
        text = json.dumps(example.expected, ensure_ascii=False)
        answers.append((guard, backend._tokenize(text)[1:]))  # without the BOS token
    rng = np.random.default_rng(0)
    base = rng.standard_normal(n_vocab).astype(np.float32)

    def one_pass(only_guarded: bool) -> tuple[float, int]:
        tokens = 0
        start = time.perf_counter()
        for guard, ids in answers:
            if only_guarded and not guard.active:
                continue
            token_guard = TokenGuard(guard)
            for token in ids:
                scores = base.copy()
                scores[token] = 100.0  # the answer's token is the best allowed one
                token_guard.pick(scores, None, piece, lambda _t: False)
                tokens += 1
        return time.perf_counter() - start, tokens

    def copy_only(tokens: int) -> float:
        start = time.perf_counter()
        for _ in range(tokens):
            scores = base.copy()
            scores[0] = 100.0
        return time.perf_counter() - start

    device = device_info(1)
    print(f"{time.strftime('%Y-%m-%d')} · {device.cpu_model} · {platform.platform()}")
    print("| answers | tokens | guard us/token (pick + scan) | score-array copy us/token |")
    print("|---|---|---|---|")
    for label, only in (("schemas with guarded keywords", True), ("all schemas", False)):
        best, tokens = min(one_pass(only) for _ in range(args.repeat))
        copy_s = min(copy_only(tokens) for _ in range(args.repeat))
        print(
            f"| {label} | {tokens} | {1e6 * (best - copy_s) / tokens:.1f} | "
            f"{1e6 * copy_s / tokens:.1f} |"
        )
    backend.close()


if __name__ == "__main__":
    main()
