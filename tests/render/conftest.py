"""tests/render/ renders with Blender for real: run by ``make test-render``, which builds
``.venv-render`` (Python 3.11 with bpy 5.0.1) and sets ``CLEVR_RENDER_TESTS=1`` and
``CLEVR_BLENDER``. Elsewhere (``make test``) every test here is skipped: a render takes seconds."""

import os

import pytest


def pytest_collection_modifyitems(config, items):
    if os.environ.get("CLEVR_RENDER_TESTS") == "1":
        return
    skip = pytest.mark.skip(reason="renders with Blender: run `make test-render`")
    for item in items:
        if "tests/render/" in str(item.fspath).replace(os.sep, "/"):
            item.add_marker(skip)
