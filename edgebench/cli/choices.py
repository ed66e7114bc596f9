"""The values and defaults that option help texts name, copied from where they are
defined: `edgebench --help` then imports none of those modules (the constraint specs,
metric families and run-folder records pull in jsonschema, psutil ...).
tests/unit/cli/test_startup.py checks every copy against its source."""

from __future__ import annotations

from pathlib import Path

# edgebench.constraints.spec
MODES = ("none", "json", "gbnf", "outlines", "mask", "xgrammar")
CLOSE_SUFFIX = "+close"
CLOSABLE_MODES = ("mask",)
# edgebench.metrics.family_names()
FAMILY_NAMES = ("edgejson", "deepjson", "structure", "sted", "sobench", "schemas")
# edgebench.metrics.FAMILIES: each family's note
FAMILY_NOTES = {
    "structure": "CSA, NTED",
    "sobench": "FMA, FSMA",
    "schemas": "JSONSchemaBench compliance",
}
# edgebench.scoring.extract
PARSE_MODES = ("lenient", "reference")
# edgebench.system.cpu_share
CONTENDED_SHARE = 0.05
# edgebench.datagen.edgejson
EDGEJSON_SEED = 17
EDGEJSON_EXAMPLES_PER_SCHEMA = 8
# edgebench.db.schema
DEFAULT_DB = Path("edgebench.db")
# edgebench.runtimes.conversions()
CONVERSIONS = ("onnx", "openvino")
# edgebench.models.onnx_model
PRECISIONS = ("fp32", "int4")
GRAPHS = ("gqa", "optimum")
LM_HEADS = ("float32", "int4")
# edgebench.models.openvino_convert
OPENVINO_PRECISIONS = ("int4", "int8", "fp16")
# edgebench.doctor.diagnose
PROBE_SECONDS = 10.0
# edgebench.runfolder.records
RETIME_MODES = ("contended", "none")
DEFAULT_RETIME_MAX = 2
DEFAULT_COMPILE_TIMEOUT = 60.0
DEFAULT_MAX_CRASHES = 3
