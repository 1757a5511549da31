import jmespath
import pytest

from readiness.discovery import MAX_KEYS, MAX_VALUES, MAX_VALUES_PER_PUSH, discover_keys, jmespath_identifier, key_paths

HASH_KEY = "8f4e2b7c1d9a3e5f6b0c2d4e6f8a1b3c5d7e9f0a"


@pytest.mark.parametrize(
    ("key", "identifier"),
    [
        ("dealname", "dealname"),
        ("_id", "_id"),
        (HASH_KEY, f'"{HASH_KEY}"'),
        ("Deal Name", '"Deal Name"'),
        ("a-b", '"a-b"'),
        ('say "hi"', '"say \\"hi\\""'),
    ],
)
def test_identifiers_are_quoted_only_when_jmespath_needs_it(key, identifier):
    assert jmespath_identifier(key) == identifier
    assert jmespath.search(identifier, {key: 1}) == 1


def test_key_paths_walk_objects_and_project_arrays():
    document = {"a": {"b": 1}, "emails": [{"value": "x", "primary": True}, {"value": "y"}], "tags": ["p", "q"], "e": []}

    assert list(key_paths(document)) == [
        ("a.b", 1),
        ("emails[*].value", "x"),
        ("emails[*].primary", True),
        ("emails[*].value", "y"),
        ("tags[*]", "p"),
        ("tags[*]", "q"),
    ]


def test_every_discovered_path_is_a_working_jmespath_source():
    document = {HASH_KEY: "9.6", "person": {"email": [{"value": "a@b.c"}]}, "Deal Name": "Roof"}

    for path, value in key_paths(document):
        found = jmespath.search(path, document)
        assert value == found or value in found


def test_discovery_counts_pushes_keeps_examples_and_marks_mapped_keys():
    documents = [
        {"properties": {"dealname": "A", "amount": "1"}},
        {"properties": {"dealname": "B"}, "emails": [{"v": "x"}, {"v": "y"}]},
        {"properties": {"dealname": "A"}},
    ]

    discovery = discover_keys(documents, {"name": "properties.dealname", "customerEmail": "emails[?primary].v | [0]"})

    assert (discovery.documents, discovery.capped) == (3, False)
    assert [(k.path, k.count, k.examples, k.used_by) for k in discovery.keys] == [
        ("properties.dealname", 3, ["A", "B"], ["name"]),
        ("emails[*].v", 1, ["x", "y"], ["customerEmail"]),
        ("properties.amount", 1, ["1"], []),
    ]


def test_discovery_stops_at_the_key_cap_and_says_so():
    documents = [{f"{push}-{index}": index for index in range(90_000)} for push in range(9)]

    discovery = discover_keys(documents, {"name": '"0-1"'})

    assert (len(discovery.keys), discovery.documents, discovery.capped) == (MAX_KEYS, 9, True)
    assert discovery.keys[1].path == '"0-1"'
    assert discovery.keys[1].used_by == ["name"]


def test_discovery_reads_a_bounded_number_of_values_per_push_and_in_all():
    visited = []

    def document(number: int) -> dict:
        visited.append(number)
        return {"shared": {f"k{index}": index for index in range(MAX_VALUES_PER_PUSH * 2)}}

    discovery = discover_keys((document(number) for number in range(10_000)), {})

    assert len(visited) == MAX_VALUES // MAX_VALUES_PER_PUSH
    assert discovery.documents == len(visited)
    assert discovery.capped
    assert [key.count for key in discovery.keys[:2]] == [len(visited), len(visited)]


def test_key_paths_of_a_document_nested_deeper_than_python_recurses():
    document: object = {"leaf": 1}
    for _ in range(5_000):
        document = {"a": [document]}

    [(path, value)] = list(key_paths(document))

    assert (path, value) == ("a[*]." * 5_000 + "leaf", 1)
