"""Write the three served OpenAPI documents (sandbox, production, platform) into a folder, as their schema views
answer them: `python .ci/openapi/documents.py FOLDER`."""

import os
import sys
from pathlib import Path

import django

DOCUMENTS = {
    "sandbox": "/sandbox/api/v1/schema/",
    "production": "/api/v1/schema/",
    "platform": "/platform/api/v1/schema/",
}


def main(folder: Path) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "integration_service.settings")
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    django.setup()
    from django.test import Client

    for name, path in DOCUMENTS.items():
        answer = Client(HTTP_HOST="127.0.0.1").get(path, {"format": "json"})
        if answer.status_code != 200:
            sys.exit(f"{path}: {answer.status_code}")
        (folder / f"{name}.json").write_bytes(answer.content)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
