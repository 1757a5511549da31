"""Nothing in the apps reaches another module by a name the import check cannot see (docs/decisions.md, "One way to
queue a task"): no `apps.get_model` (migrations excepted: they must), and `import_string` (or `import_module`) only
for a dotted path read from settings, Django's idiom (MIDDLEWARE, READINESS_DETAILS, WORKER_QUEUE_LOOPS)."""

import ast
import tomllib
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LOOK_UPS = {"import_string", "import_module", "__import__"}


def app_packages() -> list[str]:
    """The packages import-linter checks: every app, integration_service and core."""
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return pyproject["tool"]["importlinter"]["root_packages"]


def app_modules() -> Iterator[Path]:
    for package in app_packages():
        for path in sorted((ROOT / package).rglob("*.py")):
            if not {"migrations", "tests"} & set(path.relative_to(ROOT).parts):
                yield path


def _names(node: ast.AST) -> set[str]:
    return {child.id for child in ast.walk(node) if isinstance(child, ast.Name)}


def _called(call: ast.Call) -> str:
    func = call.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def _from_settings(argument: ast.expr, scope: ast.AST) -> bool:
    """Whether the argument is read from settings: `settings.X...`, or a name its scope binds only from settings
    (`for name, path in settings.X.items()`, `path = settings.X`)."""
    if "settings" in _names(argument):
        return True
    if not isinstance(argument, ast.Name):
        return False
    sources = []
    for node in ast.walk(scope):
        if isinstance(node, ast.For | ast.comprehension):
            targets, source = [node.target], node.iter
        elif isinstance(node, ast.Assign):
            targets, source = node.targets, node.value
        elif isinstance(node, ast.AnnAssign | ast.NamedExpr):
            targets, source = [node.target], node.value
        else:
            continue
        if any(argument.id in _names(target) for target in targets):
            sources.append(source)
    return bool(sources) and all(source is not None and "settings" in _names(source) for source in sources)


def _scopes(tree: ast.Module) -> Iterator[tuple[ast.AST, ast.Call]]:
    """Every call with the innermost function (or the module) around it."""

    def visit(node: ast.AST, scope: ast.AST) -> Iterator[tuple[ast.AST, ast.Call]]:
        for child in ast.iter_child_nodes(node):
            inner = child if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) else scope
            if isinstance(child, ast.Call):
                yield scope, child
            yield from visit(child, inner)

    yield from visit(tree, tree)


def look_ups_by_name(path: Path) -> list[str]:
    """`file:line: what` for each look-up by name in the module that the import check cannot follow."""
    tree = ast.parse(path.read_text(), filename=str(path))
    where = path.relative_to(ROOT)
    found = []
    for scope, call in _scopes(tree):
        name = _called(call)
        if name == "get_model" and isinstance(call.func, ast.Attribute) and "apps" in ast.unparse(call.func.value):
            found.append(f"{where}:{call.lineno}: {ast.unparse(call.func)}(...): import the model (or register it)")
        elif name in LOOK_UPS and call.args and not _from_settings(call.args[0], scope):
            argument = ast.unparse(call.args[0])
            found.append(f"{where}:{call.lineno}: {name}({argument}): import it, or read the path from settings")
    return found


def test_no_module_of_the_apps_looks_code_up_by_a_name_the_import_check_cannot_see():
    modules = list(app_modules())
    assert len(modules) > 200  # the apps were found

    found = [line for path in modules for line in look_ups_by_name(path)]

    assert not found, "Looked up by name, hidden from import-linter:\n" + "\n".join(found)


def test_the_guard_sees_what_it_forbids(tmp_path, monkeypatch):
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    module = tmp_path / "sample.py"
    module.write_text(
        "from django.apps import apps\n"
        "import django.apps\n"
        "from django.conf import settings\n"
        "from django.utils.module_loading import import_string\n"
        "HOOK = 'webhooks.tasks.drain_request'\n"
        "def hook():\n"
        "    import_string('webhooks.tasks.drain_request')\n"
        "    import_string(HOOK)\n"
        "    apps.get_model('webhooks', 'WebhookEndpoint')\n"
        "    django.apps.apps.get_model('mappings.MappingPublication')\n"
        "def allowed():\n"
        "    import_string(settings.HOOK)\n"
        "    for name, path in settings.READINESS_DETAILS.items():\n"
        "        import_string(path)\n"
    )

    assert [line.split(": ")[0] for line in look_ups_by_name(module)] == [
        "sample.py:7",
        "sample.py:8",
        "sample.py:9",
        "sample.py:10",
    ]
