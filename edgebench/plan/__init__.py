"""Benchmark plans: one TOML file, the same matrix on every device.

file.py     plan.toml -> a checked `Plan` (one-line errors naming file, line and key)
cells.py    the plan's cells: ids, and the `edgebench run` / `bench` command of each
state.py    what a plan folder holds: each cell done, partial or new; plan-status.json
execute.py  `edgebench plan run`: variants first, then each cell in a process of its own
"""
