"""The run folder: its files (manifest.json, samples.jsonl, summary.json), the lock that
keeps a second writer out, and reading them back. This is the format other tools read."""
