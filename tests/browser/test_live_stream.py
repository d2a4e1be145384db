"""The live feed served by a real ASGI server (uvicorn) to a real browser."""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser

from combat import services
from tests.factories import PASSWORD, make_campaign, make_user

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_browser_opens_the_event_stream_over_asgi(asgi_server, browser: Browser):
    gm, player = make_user("gm"), make_user("pat")
    campaign = make_campaign(gm, players=(player,))
    encounter, entry = services.create_encounter(campaign=campaign, name="Ambush", actor=gm)
    page = browser.new_context().new_page()
    page.goto(f"{asgi_server.url}/accounts/login/")
    page.get_by_label("Username").fill("pat")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url("**/dashboard/")
    first = page.evaluate(
        """url => new Promise((resolve, reject) => {
            const source = new EventSource(url);
            source.addEventListener("hello", e => { resolve(e.lastEventId); source.close(); });
            source.onerror = () => reject(new Error("stream failed"));
        })""",
        f"{asgi_server.url}/encounters/{encounter.pk}/events/",
    )
    assert first == str(entry.pk)
