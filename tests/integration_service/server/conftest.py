import pytest

from tests.gunicorn import gunicorn_serving


@pytest.fixture(scope="package")
def address() -> tuple[str, int]:
    """One gunicorn for the tests of this folder that need no settings of their own (starting one takes seconds),
    on a migrated SQLite database without users."""
    with gunicorn_serving(migrated=True) as address:
        yield address
