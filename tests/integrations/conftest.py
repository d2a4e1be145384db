from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from integrations.models import EVENT_TYPES, WebhookEndpoint
from tests.integrations.receiver import Receiver, start


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r, server = start()
    yield r
    server.shutdown()
    server.server_close()


@pytest.fixture
def hook(table: Any, receiver: Receiver) -> WebhookEndpoint:
    """An endpoint of the table's campaign, every event, pointing at the receiver."""
    endpoint = WebhookEndpoint.objects.create(
        campaign=table.campaign, url=receiver.url, events=list(EVENT_TYPES)
    )
    receiver.secret = endpoint.secret
    return endpoint
