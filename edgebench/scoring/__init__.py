"""Parsing model output, JSON equality, offline schema validation and the task metrics."""
