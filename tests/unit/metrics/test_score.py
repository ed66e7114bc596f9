"""The one scoring path: `score_output` parses a raw output once and every selected family
scores that same parse; the families a run records (`describe_families`) come back with
the same parameters (`families_of`), so a stored run scores the same again."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pytest

from edgebench.errors import UserError
from edgebench.metrics import Family, family_names, get_family, select_families
from edgebench.metrics.base import Evaluation
from edgebench.metrics.score import describe_families, families_of, score_output
from edgebench.runfolder.records import FamilyRecord, ParseStep
from edgebench.scoring.extract import Extraction
from edgebench.scoring.parse import ParseResult, parse_json_output
from tests.helpers.movie import MOVIE, MOVIE_SCHEMA

# A chatty answer: the parse has work to do (a fence inside prose), and one rating is off.
PARTIAL = dict(MOVIE, Ratings=[MOVIE["Ratings"][0], {"Source": "Metacritic", "Score": 8}])
RAW = "Sure! Here it is:\n```json\n" + json.dumps(PARTIAL) + "\n```\nAnything else?"


@dataclass(frozen=True)
class Recording:
    """A family as `score_output` sees it (a name and `evaluate`), noting what it got."""

    family: Family
    seen: list[ParseResult] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.family.name

    def evaluate(self, output: ParseResult, expected: Any, schema: Any) -> Evaluation:
        self.seen.append(output)
        return self.family.evaluate(output, expected, schema)


def test_the_output_is_parsed_once_and_every_family_scores_that_parse() -> None:
    parses: list[str] = []

    def counting_parse(raw: str) -> ParseResult:
        parses.append(raw)
        return parse_json_output(raw)

    counting = Extraction("counting", "this test", counting_parse)
    families = [Recording(get_family(name)) for name in family_names()]
    result = score_output(families, RAW, MOVIE, MOVIE_SCHEMA, counting)  # type: ignore[arg-type]

    assert parses == [RAW]
    (parse,) = {id(f.seen[0]): f.seen[0] for f in families}.values()  # one object for all
    assert all(len(f.seen) == 1 for f in families)
    assert result.parse == ParseStep(ok=True, path="fenced_json", error=None)
    assert (parse.ok, parse.path, parse.value) == (True, "fenced_json", PARTIAL)
    assert result.parsed == PARTIAL
    assert list(result.scores) == family_names()  # in the order given


def test_each_familys_scores_are_its_own_evaluation_of_the_parse() -> None:
    families = [get_family(name) for name in family_names()]
    result = score_output(families, RAW, MOVIE, MOVIE_SCHEMA)
    parsed = parse_json_output(RAW)
    for family in families:
        alone = family.evaluate(parsed, MOVIE, MOVIE_SCHEMA)
        assert result.scores[family.name] == alone.scores
        assert result.details.get(family.name, {}) == alone.details
    # the families see one parse but keep their own rules: the same answer is half right
    # for some and plain wrong for others
    assert result.scores["edgejson"]["json_exact"] == 0
    assert result.scores["deepjson"]["key_matching"] == pytest.approx(3.75 / 4)
    assert result.scores["structure"]["valid_json"] == 1


def test_only_families_that_explain_their_scores_have_details() -> None:
    families = [get_family(name) for name in family_names()]
    result = score_output(families, '{"Year": "2023"}', MOVIE, MOVIE_SCHEMA)
    assert set(result.details) == {"edgejson", "deepjson", "schemas"}
    assert (
        result.details["edgejson"]["schema_errors"] == result.details["deepjson"]["schema_errors"]
    )
    assert set(result.details["deepjson"]) == {"schema_errors", "element_scores"}
    for name in ("structure", "sted", "sobench"):
        assert get_family(name).evaluate(parse_json_output("{}"), MOVIE, MOVIE_SCHEMA).details == {}


def test_an_unparseable_output_is_scored_by_every_family() -> None:
    families = [get_family(name) for name in family_names()]
    result = score_output(families, "I cannot help with that.", MOVIE, MOVIE_SCHEMA)
    assert result.parse.ok is False and result.parse.path == "none" and result.parse.error
    assert result.parsed is None
    assert set(result.scores) == set(family_names())
    # every field below the root is missed: Year, IsSequel, Genres (+2 items), Ratings
    # (+2 items of 2 fields each)
    assert result.scores["sobench"]["fields"] == 12
    assert result.scores["sobench"]["fields_exact"] == 0
    assert result.scores["sted"]["sted"] == 0.0


# --- what a run records, and the families it gives back ---------------------------------

CLI_PARAMS = {"sted": {"size_penalty": "0.2"}, "sobench": {"check_formats": "true"}}


def test_described_families_round_trip_with_their_parameters() -> None:
    families = select_families("edgejson", ("sted", "sobench"), CLI_PARAMS)
    records = describe_families(families, "edgejson")

    assert list(records) == ["edgejson", "sted", "sobench"]
    assert [r.role for r in records.values()] == ["task", "extra", "extra"]
    # parameters are recorded as values, not as the command line's strings
    assert records["sted"].parameters == {
        "type_coercion_weight": 0.9,
        "size_penalty": 0.2,
        "steepness": 2.0,
        "unparseable_similarity": 0.0,
    }
    assert records["sobench"].parameters["check_formats"] is True
    assert records["edgejson"].parameters == {"check_formats": False}
    assert records["sobench"].scores == list(get_family("sobench").score_names)
    assert records["sobench"].summary[0] == "schema_validation_accuracy"

    # through manifest.json and back
    stored = json.loads(json.dumps({name: r.to_json() for name, r in records.items()}))
    read = {name: FamilyRecord.from_json(data, name) for name, data in stored.items()}
    assert read == records
    again = families_of(read)
    assert again == families  # same classes, same parameters, same order
    assert [type(f) for f in again] == [type(f) for f in families]
    assert describe_families(again, "edgejson") == records
    assert score_output(again, RAW, MOVIE, MOVIE_SCHEMA) == score_output(
        families, RAW, MOVIE, MOVIE_SCHEMA
    )


def test_recorded_parameters_change_the_scores_they_give_back() -> None:
    # sted's unparseable_similarity decides the score of an output that does not parse
    lenient = describe_families([get_family("sted", {"unparseable_similarity": 0.5})], "x")
    (family,) = families_of(lenient)
    assert lenient["sted"].role == "extra"
    assert score_output([family], "nope", MOVIE, MOVIE_SCHEMA).scores["sted"]["sted"] == 0.5


def test_a_recorded_family_with_an_unknown_parameter_is_refused() -> None:
    record = describe_families([get_family("sted")], "sted")["sted"]
    edited = FamilyRecord.from_json({**record.to_json(), "parameters": {"lambda": 1}})
    with pytest.raises(UserError, match="metric family 'sted' has no parameter 'lambda'"):
        families_of({"sted": edited})
