from mappings.diff import FieldDiff, document_diff

NAME = {"source": "title", "type": "string"}
SIZE_W = {"source": "size", "type": "decimal", "scale": 0.001}
SIZE_KW = {"source": "size", "type": "decimal"}
CITY = {"source": "town", "type": "string"}


def test_added_removed_and_changed_fields_in_canonical_order():
    before = {"fields": {"systemSizeKw": SIZE_W, "name": NAME, "city": CITY}}
    after = {"fields": {"city": CITY, "systemSizeKw": SIZE_KW, "status": {"source": "s", "type": "string"}}}

    assert document_diff(before, after) == [
        FieldDiff("name", "removed", NAME, None, ("source", "type")),
        FieldDiff("status", "added", None, {"source": "s", "type": "string"}, ("source", "type")),
        FieldDiff("systemSizeKw", "changed", SIZE_W, SIZE_KW, ("scale",)),
    ]


def test_a_key_only_in_the_newer_spec_is_a_change():
    assert document_diff({"fields": {"name": NAME}}, {"fields": {"name": {**NAME, "required": True}}}) == [
        FieldDiff("name", "changed", NAME, {**NAME, "required": True}, ("required",))
    ]


def test_identical_and_empty_documents_have_no_differences():
    assert document_diff({"fields": {"name": NAME}}, {"fields": {"name": dict(NAME)}}) == []
    assert document_diff({}, {"fields": {}}) == []
