"""The repository's pytest hooks for tests/ and ui-tests/ alike: each test's tier.

Every test gets one tier marker (unit, stack, cluster, hub, postgres, browser) from what its
module imports: ``tests/helpers/tiers.py`` says how. ``pytest -m unit`` runs the pure tests.
"""

from __future__ import annotations

import pytest

from tests.helpers.tiers import mark_tiers


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # tryfirst: the markers must be there before ``-m`` deselects
    mark_tiers(items)
