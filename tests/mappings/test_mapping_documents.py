import pytest

from mappings.documents import MappingDocumentInvalid, mapping_document, parse_mapping_document

VALID = {
    "fields": {
        "status": {"source": "dealstage", "type": "enum", "values": {"closedwon": "contracted"}},
        "systemSizeKw": {"source": "system_size_stc", "type": "decimal", "scale": 0.001},
        "name": {"source": "properties.dealname || title", "type": "string", "required": True},
        "currency": {"source": "currency", "type": "string", "default": "USD"},
        "customerPhone": {"source": "phone", "type": "phone", "region": "DE"},
        "installDate": {"source": "install", "type": "date", "formats": ["%d.%m.%Y"]},
    }
}

SCALE_PROBLEM = (
    "fields.systemSizeKw.scale: must be a number from 1e-12 to 1e12 in size, e.g. 0.001 for watts to kilowatts"
)


def problems_of(document) -> list[str]:
    with pytest.raises(MappingDocumentInvalid) as invalid:
        parse_mapping_document(document)
    return [str(problem) for problem in invalid.value.problems]


def test_valid_document_round_trips_in_canonical_field_order():
    rules = parse_mapping_document(VALID)

    assert [rule.field for rule in rules] == [
        "name",
        "status",
        "customerPhone",
        "systemSizeKw",
        "currency",
        "installDate",
    ]
    assert parse_mapping_document(mapping_document(rules)) == rules
    assert mapping_document(rules)["fields"]["name"] == {
        "source": "properties.dealname || title",
        "type": "string",
        "required": True,
    }


def test_every_problem_is_listed_at_once():
    document = {
        "fields": {
            "colour": {"source": "a", "type": "string"},
            "name": {"source": "foo[", "type": "string"},
            "status": {"source": "s", "type": "enum", "values": {"won": "sold"}},
            "systemSizeKw": {"source": "w", "type": "decimal", "scale": "1000", "precision": 2},
            "moduleCount": {"source": "n", "type": "date"},
            "customerPhone": {"source": "p", "type": "phone", "region": "XX"},
            "installDate": {"source": "d", "type": "date", "formats": "%d.%m.%Y"},
            "city": {"type": "text"},
            "currency": {"source": "c", "type": "string", "default": "dollars"},
            "notes": {"source": "n", "type": "string", "required": "yes"},
            "state": "ST",
        },
        "version": 2,
    }

    assert problems_of(document) == [
        "version: unknown key; a mapping document has only 'fields'",
        'fields.colour: "colour" is not a canonical field; use one of name, status, customerFirstName, '
        "customerLastName, customerEmail, customerPhone, addressLine1, addressLine2, city, state, postalCode, country, "
        "systemSizeKw, moduleCount, moduleModel, inverterModel, batteryCapacityKwh, contractAmount, currency, "
        "contractSignedDate, installDate, salesRep, notes",
        'fields.name.source: "foo[" is not a valid JMESPath expression: '
        'Invalid jmespath expression: Incomplete expression:\n"foo["\n     ^',
        'fields.status.values.won: "sold" is not a project status (lead, proposal, contracted, design, permitting, '
        "installation, inspection, pto, completed, on_hold, cancelled)",
        "fields.systemSizeKw.precision: is not an option of type decimal",
        f'{SCALE_PROBLEM}; got "1000"',
        'fields.moduleCount.type: "date" cannot fill moduleCount; use integer, decimal',
        'fields.customerPhone.region: "XX" must be a two-letter region code such as US, DE or AU',
        'fields.installDate.formats: must be a list of strptime patterns, e.g. ["%m/%d/%Y"]',
        "fields.city.source: is required: a JMESPath expression over data",
        'fields.city.type: "text" must be one of string, integer, decimal, boolean, date, datetime, email, phone, enum',
        'fields.currency.default: "dollars" is not an ISO 4217 currency code',
        'fields.notes.required: "yes" must be true or false',
        'fields.state: "ST" must be an object with at least source and type',
    ]


@pytest.mark.parametrize(
    ("document", "problem"),
    [
        ([], '(document): must be an object: {"fields": {...}}'),
        ({}, "fields: is required: an object of canonical field name → mapping"),
        ({"fields": []}, "fields: is required: an object of canonical field name → mapping"),
        (
            {"fields": {"status": {"source": "s", "type": "enum"}}},
            "fields.status.values: (missing) must be a non-empty object of source value → canonical value",
        ),
    ],
)
def test_malformed_documents(document, problem):
    assert problems_of(document) == [problem]


@pytest.mark.parametrize(
    ("document", "problem"),
    [
        (
            {"fields": {"name": {"source": "'a\u0000'", "type": "string"}}},
            "fields.name.source: holds a character that cannot be stored (NUL or a lone surrogate)",
        ),
        (
            {"fields": {"city": {"source": "'\ud800'", "type": "string"}}},
            "fields.city.source: holds a character that cannot be stored (NUL or a lone surrogate)",
        ),
        (
            {"fields": {"status": {"source": "s", "type": "enum", "values": {"won\u0000": "contracted"}}}},
            "fields.status.values: holds a character that cannot be stored (NUL or a lone surrogate)",
        ),
    ],
)
def test_a_string_postgresql_cannot_store_is_a_problem_not_a_database_error(document, problem):
    # A raw string literal may hold NUL, which neither jsonb nor text take: the save path met a DataError.
    assert problems_of(document) == [problem]


def test_an_empty_fields_object_is_valid_and_means_unmapped():
    assert parse_mapping_document({"fields": {}}) == []


@pytest.mark.parametrize(
    ("scale", "quoted"),
    [
        (float("nan"), "NaN"),
        (float("inf"), "Infinity"),
        (float("-inf"), "-Infinity"),
        (1e300, "1e+300"),
        (-1e13, "-10000000000000.0"),
        (1e-300, "1e-300"),
        (10**400, "1" + "0" * 39 + "…"),
        (0, "0"),
        ("1000", '"1000"'),
        (True, "true"),
        (None, "null"),
    ],
)
def test_scales_that_would_make_conversion_unbounded_or_non_finite_are_refused_quoting_them(scale, quoted):
    document = {"fields": {"systemSizeKw": {"source": "w", "type": "decimal", "scale": scale}}}

    assert problems_of(document) == [f"{SCALE_PROBLEM}; got {quoted}"]


@pytest.mark.parametrize("scale", [1e-12, -1e12, 0.001, 1000, 3.6e6])
def test_scales_within_the_limits_are_accepted(scale):
    document = {"fields": {"systemSizeKw": {"source": "w", "type": "decimal", "scale": scale}}}

    assert parse_mapping_document(document)[0].options == {"scale": scale}


@pytest.mark.parametrize(
    ("formats", "problem"),
    [
        (["%Y %Y"], '"%Y %Y" is not a strptime pattern that reads back the dates it writes'),
        (["%d.%m.%Y", "%Q"], '"%Q" is not a strptime pattern that reads back the dates it writes'),
        (["%d" * 51], f'"{"%d" * 20}…" is longer than 100 characters'),
        (["%d.%m.%Y"] * 21, "must hold at most 20 patterns; got 21"),
    ],
)
def test_formats_strptime_cannot_use_or_too_many_are_refused(formats, problem):
    document = {"fields": {"installDate": {"source": "d", "type": "date", "formats": formats}}}

    assert problems_of(document) == [f"fields.installDate.formats: {problem}"]


def test_a_default_with_a_huge_exponent_is_refused_at_once():
    document = {"fields": {"moduleCount": {"source": "n", "type": "integer", "default": "1e2000000"}}}

    assert problems_of(document) == ['fields.moduleCount.default: "1e2000000" is number out of range']


def test_a_refused_type_is_quoted_and_a_missing_one_said_so():
    document = {"fields": {"status": {"source": "s", "type": "colour"}, "name": {"source": "n"}}}

    assert problems_of(document) == [
        'fields.status.type: "colour" must be one of string, integer, decimal, boolean, date, datetime, email, '
        "phone, enum",
        "fields.name.type: (missing) must be one of string, integer, decimal, boolean, date, datetime, email, phone, "
        "enum",
    ]
