"""The results database: run folders ingested into one SQLite file (stdlib sqlite3).

schema.py opens a database and creates or checks its tables; validate.py checks a run
folder against the published run-format schemas; rows.py turns a loaded run into table
rows; ingest.py finds run folders and stores them (idempotent); runs.py writes a stored
run's files back out so every reader of run folders reads it unchanged; export.py writes
the tables as CSV or Parquet.
"""
