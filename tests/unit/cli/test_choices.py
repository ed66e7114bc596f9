"""cli/choices.py copies the values and defaults that option help texts name, so that
`edgebench --help` imports none of their modules (tests/system/test_startup.py); each copy
is what its module holds."""

from __future__ import annotations

from edgebench.cli import choices
from edgebench.constraints.spec import CLOSABLE_MODES, CLOSE_SUFFIX, MODES
from edgebench.datagen import edgejson
from edgebench.db.schema import DEFAULT_DB
from edgebench.doctor.diagnose import PROBE_SECONDS
from edgebench.metrics import FAMILIES, family_names
from edgebench.models.onnx_model import GRAPHS, LM_HEADS, PRECISIONS
from edgebench.models.openvino_convert import PRECISIONS as OPENVINO_PRECISIONS
from edgebench.runfolder import records
from edgebench.runtimes import conversions
from edgebench.scoring.extract import PARSE_MODES
from edgebench.system.cpu_share import CONTENDED_SHARE


def test_the_help_texts_values_are_the_codes() -> None:
    assert tuple(MODES) == choices.MODES
    assert choices.CLOSE_SUFFIX == CLOSE_SUFFIX
    assert tuple(CLOSABLE_MODES) == choices.CLOSABLE_MODES
    assert tuple(family_names()) == choices.FAMILY_NAMES
    assert {n: i.note for n, i in FAMILIES.items() if i.note} == choices.FAMILY_NOTES
    assert tuple(PARSE_MODES) == choices.PARSE_MODES
    assert choices.CONTENDED_SHARE == CONTENDED_SHARE
    assert tuple(records.RETIME_MODES) == choices.RETIME_MODES
    assert choices.DEFAULT_RETIME_MAX == records.DEFAULT_RETIME_MAX
    assert choices.DEFAULT_COMPILE_TIMEOUT == records.DEFAULT_COMPILE_TIMEOUT
    assert choices.DEFAULT_MAX_CRASHES == records.DEFAULT_MAX_CRASHES
    assert choices.EDGEJSON_SEED == edgejson.DEFAULT_SEED
    assert choices.EDGEJSON_EXAMPLES_PER_SCHEMA == edgejson.DEFAULT_EXAMPLES_PER_SCHEMA
    assert choices.DEFAULT_DB == DEFAULT_DB
    assert choices.PROBE_SECONDS == PROBE_SECONDS
    assert conversions() == choices.CONVERSIONS
    assert (
        tuple(PRECISIONS),
        tuple(GRAPHS),
        tuple(LM_HEADS),
    ) == (choices.PRECISIONS, choices.GRAPHS, choices.LM_HEADS)
    assert tuple(OPENVINO_PRECISIONS) == choices.OPENVINO_PRECISIONS
