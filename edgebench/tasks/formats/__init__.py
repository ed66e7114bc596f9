"""One reader per dataset format, shared by `run`, `score` and `data validate`.

    edgejson.py   EdgeJSON rows (JSONL) and their `<complexity>/<schema_id>.json` folder
    deepjson.py   DeepJSONEval rows (`.jsonl` or `.xlsx`), each with its own schema
    objects.py    a JSONL file of JSON objects (the roundtrip corpus)
    jsonl.py      what they share: strict JSON, bounded nesting, numbered lines, suffixes

A reader returns typed rows or raises a one-line UserError naming file, line (or sheet
row) and field. Whether the rows are good data (ground truth valid, values in the text)
is for the checks that use them: `run` refuses at the first failure, `data validate`
lists every failing row.
"""
