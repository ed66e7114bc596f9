"""`edgebench bench`: speed rows measured in workers, above the run engine it reuses.

execute.py    the rows planned (ppN, tgN, at a depth), run in one worker per model,
              timed, checked for contention, written to bench.json
sustained.py  `--duration`: each row's first minute against its last
"""
