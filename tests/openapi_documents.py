"""Reading an OpenAPI document in tests: its schema objects, its examples."""

from collections.abc import Iterator

ANY_JSON_VALUE = {"string", "number", "boolean", "object", "array"}


def schema_objects(schema: dict, where: str) -> Iterator[tuple[str, dict]]:
    """`schema` and every schema inside it, with where each is."""
    yield where, schema
    for name, member in schema.get("properties", {}).items():
        yield from schema_objects(member, f"{where}.{name}")
    any_json_value = isinstance(schema.get("type"), list) and ANY_JSON_VALUE.issubset(schema["type"])
    for keyword in ("items", "additionalProperties", "not"):
        if isinstance(schema.get(keyword), dict) and not (keyword == "items" and any_json_value):  # its array: anything
            yield from schema_objects(schema[keyword], f"{where}.{keyword}")
    for keyword in ("oneOf", "anyOf", "allOf"):
        for index, member in enumerate(schema.get(keyword, [])):
            yield from schema_objects(member, f"{where}.{keyword}[{index}]")


def document_schemas(node, where: str = "#") -> Iterator[tuple[str, dict]]:
    """Every schema object of an OpenAPI document: the components' and those of its parameters, bodies, headers."""
    if isinstance(node, list):
        for index, item in enumerate(node):
            yield from document_schemas(item, f"{where}/{index}")
    elif isinstance(node, dict):
        for key, value in node.items():
            if key == "schema" and isinstance(value, dict):
                yield from schema_objects(value, f"{where}/schema")
            elif key == "schemas" and where == "#/components":
                for name, schema in value.items():
                    yield from schema_objects(schema, f"{where}/schemas/{name}")
            elif key not in ("example", "examples"):
                yield from document_schemas(value, f"{where}/{key}")


def media_examples(document: dict) -> Iterator[tuple[str, dict, object]]:
    """(where, schema, value) of every example of a request or response body."""
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            contents = [("request", operation.get("requestBody", {}).get("content", {}))]
            contents += [(status, answer.get("content", {})) for status, answer in operation["responses"].items()]
            for where, content in contents:
                for media_type, media in content.items():
                    for name, example in media.get("examples", {}).items():
                        yield f"{method} {path} {where} {media_type} {name}", media["schema"], example["value"]
