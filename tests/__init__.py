"""The test suite, laid out like the package: one folder per layer of ``richprogress/``
(``model``, ``wording``, ``story``, ``typical``, ``stream``, ``kube``, ``history``, ``web``),
``cli`` (``richprogress explain``), ``demo`` (the simulated cluster, the demo launcher,
replay) and ``setup`` (``richprogress.setup(c)``, the settings check, metrics, packaging
and the docs), with the shared helpers in ``tests.helpers``.

A test module imports helpers (``from tests.helpers.hub import hub_process``), never
another test module; ``tests/test_layout.py`` checks it.
"""

import pytest

# the helpers' asserts explain themselves on failure, as a test module's do
pytest.register_assert_rewrite("tests.helpers")
