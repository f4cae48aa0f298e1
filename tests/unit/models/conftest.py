import pytest

from footnote.models.ledger import Ledger


@pytest.fixture
def ledger() -> Ledger:
    return Ledger()
