"""Reading a batch push body: parsed once, each record's JSON text kept as sent (its raw push's body)."""

import json
import re
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from rest_framework.exceptions import ValidationError
from rest_framework.parsers import BaseParser

from core.api.parsers import JSONText, body_charset, decode_body, parse_json_body, structure_problem
from core.problems import problem_body, validation_problem_body
from ingest.api.serializers import ExternalIdField, PushSerializer, json_kind, push_fields
from ingest.batch_services import BatchRecord

_WHITESPACE = re.compile(r"[ \t\n\r]*")


@dataclass(frozen=True)
class BatchBody:
    """A parsed batch body: `value` as json.loads reads it; `records` the elements of its `records` array with
    their texts, or None when the body has no `records` array."""

    value: Any
    records: list[JSONText] | None


class _NotABatchObject(Exception):
    """The body is not shaped as the fast reader expects; it is read again the ordinary way."""


def _skip_whitespace(text: str, index: int) -> int:
    return _WHITESPACE.match(text, index).end()


def _expect(text: str, index: int, characters: str) -> tuple[str, int]:
    index = _skip_whitespace(text, index)
    if text[index : index + 1] not in characters or index >= len(text):
        raise _NotABatchObject
    return text[index], _skip_whitespace(text, index + 1)


def _read_array(text: str, index: int, decoder: json.JSONDecoder) -> tuple[list[JSONText], int]:
    """The elements of the array starting at `index` (after its "["), with their texts; and the index after it."""
    elements: list[JSONText] = []
    if text[index : index + 1] == "]":
        return elements, index + 1
    while True:
        value, end = decoder.raw_decode(text, index)
        elements.append(JSONText(value=value, text=text[index:end]))
        separator, index = _expect(text, end, ",]")
        if separator == "]":
            return elements, index


def _read_batch_object(text: str, decoder: json.JSONDecoder) -> BatchBody:
    """One pass over a top-level JSON object, keeping the texts of its `records` array's elements."""
    _, index = _expect(text, 0, "{")
    value: dict[str, Any] = {}
    records = None
    if text[index : index + 1] == "}":
        index += 1
    else:
        while True:
            key, index = decoder.raw_decode(text, index) if text[index : index + 1] == '"' else (None, index)
            if key is None:
                raise _NotABatchObject
            _, index = _expect(text, index, ":")
            if key == "records" and text[index : index + 1] == "[":
                records, index = _read_array(text, _skip_whitespace(text, index + 1), decoder)
                value[key] = [record.value for record in records]
            else:
                value[key], index = decoder.raw_decode(text, index)
                if key == "records":  # a later "records" key wins, as in json.loads
                    records = None
            separator, index = _expect(text, index, ",}")
            if separator == "}":
                break
    if _skip_whitespace(text, index) != len(text):
        raise _NotABatchObject
    return BatchBody(value=value, records=records)


def read_batch_body(text: str) -> BatchBody:
    """The batch body's value and its records' texts, or ParseError as the single push would say it.

    Only what makes the whole body unreadable is refused here (not JSON, NaN, an integer too long to read);
    what makes one record unstorable (too deep, NUL, lone surrogates, infinite numbers) is that record's problem.
    """
    try:
        return _read_batch_object(text, json.JSONDecoder(parse_constant=_refuse_constant_later))
    except (_NotABatchObject, ValueError, RecursionError, _ConstantRefused):
        pass  # read again the ordinary way, for the single push's message (or for a body that is not an object)
    value = _parse_ordinary(text)
    if isinstance(value, dict) and isinstance(value.get("records"), list):  # not expected: the fast reader read it
        texts = [json.dumps(record, ensure_ascii=False) for record in value["records"]]
        return BatchBody(value=value, records=[JSONText(*pair) for pair in zip(value["records"], texts, strict=True)])
    return BatchBody(value=value, records=None)


def _parse_ordinary(text: str) -> Any:
    return parse_json_body(text)


class _ConstantRefused(Exception):
    pass


def _refuse_constant_later(literal: str) -> None:
    raise _ConstantRefused(literal)


class BatchJSONParser(BaseParser):
    """application/json bodies of the batch push, read into a BatchBody (the view validates its shape)."""

    media_type = "application/json"

    def parse(self, stream, media_type: str | None = None, parser_context: dict | None = None) -> BatchBody:
        return read_batch_body(decode_body(stream.read(), body_charset(media_type)))


# --- the batch's shape, and each record's ------------------------------------------------------------------------


@dataclass(frozen=True)
class ReadRecord:
    """One record of a batch, read: `record` when it can be stored, else `problem` (a problem body for its 400)."""

    index: int
    external_id: str | None
    record: BatchRecord | None = None
    problem: dict | None = None


def batch_records(body: Any) -> list[ReadRecord]:
    """Each record of a batch body, valid or with its problem; ValidationError (400) when the body is not a batch.

    A record is held to every rule of a single push's body (CONTRACT §4): an object with `id` and `data`, no
    deeper than the push's nesting limit counted from the record, nothing the database cannot store.
    """
    if not isinstance(body, BatchBody):  # no body at all: DRF's empty data
        body = BatchBody(value=body, records=None)
    if not isinstance(body.value, dict):
        raise ValidationError(
            {"": [f'The body must be a JSON object {{"records": [...]}}, not {json_kind(body.value)}.']}
        )
    if body.records is None:
        if "records" not in body.value:
            raise ValidationError({"records": ['This field is required: a list of {"id", "data"} records.']})
        raise ValidationError({"records": [f"Must be a list of records, not {json_kind(body.value['records'])}."]})
    limit = settings.PUSH_BATCH_MAX_RECORDS
    if not body.records:
        raise ValidationError({"records": [f"Must hold 1 to {limit} records; this batch has none."]})
    if len(body.records) > limit:
        raise ValidationError(
            {"records": [f"Must hold 1 to {limit} records; this batch has {len(body.records)}. Split it."]}
        )
    return [_read_record(index, record) for index, record in enumerate(body.records)]


_EXTERNAL_ID = ExternalIdField()


def _read_record(index: int, record: JSONText) -> ReadRecord:
    value = record.value
    external_id = _external_id_as_sent(value)
    if not isinstance(value, dict):
        detail = f'A record must be a JSON object {{"id": ..., "data": {{...}}}}, not {json_kind(value)}.'
        return ReadRecord(index, external_id, problem=validation_problem_body({"": [detail]}))
    if problem := structure_problem(value, settings.PUSH_MAX_DEPTH):
        return ReadRecord(index, external_id, problem=problem_body(400, problem, code="parse_error"))
    if "deleted" in value:
        return _read_delete_record(index, external_id, record)
    if (fields := push_fields(value)) is not None:  # the usual record
        external_id, data = fields
        return ReadRecord(index, external_id, record=BatchRecord(external_id=external_id, data=data, body=record.text))
    serializer = PushSerializer(data=value)  # the single push's messages, for what is wrong
    if not serializer.is_valid():
        return ReadRecord(index, external_id, problem=validation_problem_body(serializer.errors))
    external_id, data = serializer.validated_data["id"], serializer.validated_data["data"]
    return ReadRecord(index, external_id, record=BatchRecord(external_id=external_id, data=data, body=record.text))


def _read_delete_record(index: int, external_id: str | None, record: JSONText) -> ReadRecord:
    """A record `{"id", "deleted": true}` deletes its project (CONTRACT §12); `deleted` with another value, or with
    `data`, is that record's 400, every problem named at once."""
    value = record.value
    errors: dict[str, list[str]] = {}
    try:
        external_id = _EXTERNAL_ID.to_internal_value(value.get("id"))
    except ValidationError as invalid:
        errors["id"] = invalid.detail if "id" in value else ["This field is required."]
    if (deleted := value["deleted"]) is not True:
        shown = (
            json.dumps(deleted) if deleted is None or isinstance(deleted, bool | int | float) else json_kind(deleted)
        )
        errors["deleted"] = [f"Must be true to delete the record's project, not {shown}; leave it out to push."]
    if "data" in value:
        errors["data"] = ['A record either pushes ("data") or deletes ("deleted": true), not both.']
    if errors:
        return ReadRecord(index, external_id, problem=validation_problem_body(errors))
    return ReadRecord(
        index, external_id, record=BatchRecord(external_id=external_id, data=None, body=record.text, deleted=True)
    )


def _external_id_as_sent(value: Any) -> str | None:
    """The record's id as the results echo it: a string, or an integer as its decimal string; else None."""
    external_id = value.get("id") if isinstance(value, dict) else None
    if isinstance(external_id, int) and not isinstance(external_id, bool):
        return str(external_id)
    return external_id if isinstance(external_id, str) else None
