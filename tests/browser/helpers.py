"""What the browser tests share: the screens they are played on, logging in, the checks every
page passes (axe-core, nothing wider than the screen, no control under 24 px, no console
error), and waiting for what the page does rather than for a fixed time.

``listen`` arms a promise in the page for the next DOM event that matches; ``wait`` blocks
until it has fired (or fails after a timeout). Armed before the action that causes the event,
it cannot miss it, and the test goes on the moment the page has done its part: an htmx
answer handled (swapped or dropped), a pushed tracker received.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Browser, Page, expect

from combat import services
from combat.models import Declaration
from tests.factories import PASSWORD

#: A player's phone and the GM's laptop, as browser context options.
PHONE: dict[str, Any] = {
    "viewport": {"width": 390, "height": 844},
    "is_mobile": True,
    "has_touch": True,
}
LAPTOP: dict[str, Any] = {"viewport": {"width": 1280, "height": 800}}

#: The demo table's users' password (tests/security/pages.py).
DEMO_PASSWORD = "omg-demo-2026"

# --- Logging in ------------------------------------------------------------------------------


def log_in(browser: Browser, base: str, username: str, **context: Any) -> Page:
    """A new browser context (``context``: its options, PHONE or LAPTOP) logged in as one of
    the factories' users (tests/factories.py)."""
    page = browser.new_context(**context).new_page()
    page.set_default_timeout(10_000)
    page.goto(f"{base}/accounts/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url("**/dashboard/")
    return page


def collect_errors(page: Page) -> None:
    """Keeps the page's console errors in ``page.errors``, which ``check_page`` reads."""
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.errors = errors  # type: ignore[attr-defined]  # collected by the test


def open_as(browser: Browser, base: str, username: str, device: dict[str, Any]) -> Page:
    """A new browser context (``device``: PHONE, LAPTOP) logged in as one of the demo table's
    users (tests/security/pages.py), its console errors collected."""
    page = browser.new_context(**device).new_page()
    collect_errors(page)
    page.goto(f"{base}/accounts/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(DEMO_PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", name="Dashboard")).to_be_visible()
    return page


def open_live(page: Page, url: str) -> None:
    """Opens a fight's page and waits until its live stream is connected."""
    page.goto(url)
    expect(page.get_by_test_id("live-status")).to_contain_text("Live")


# --- What every page passes ------------------------------------------------------------------

# Controls smaller than WCAG 2.2's 24x24 px (links inside a sentence are exempt there, so only
# links standing alone are measured). The body diagram's zones are shortcuts to each zone's own
# 44 px buttons: WCAG's "equivalent control" exception, so they are not measured.
CONTROLS = (
    "button, input:not([type=hidden]), select, summary, textarea,"
    " a:not(p a):not(small a):not(td a):not(hgroup a):not(svg a)"
)
SMALL_CONTROLS = """[...document.querySelectorAll('CONTROLS')]
  .filter(e => e.checkVisibility())
  .map(e => [e.tagName, (e.innerText || e.name || e.getAttribute('aria-label') || '').trim(),
             e.getBoundingClientRect()])
  .filter(([, , r]) => r.width < 24 || r.height < 24)
  .map(([tag, text, r]) => `${tag} "${text}" ${Math.round(r.width)}x${Math.round(r.height)}`)"""
SMALL_CONTROLS = SMALL_CONTROLS.replace("CONTROLS", CONTROLS)


def axe_clean(page: Page) -> None:
    """No serious or critical axe-core finding on the page as it stands."""
    found = Axe().run(page).response["violations"]
    serious = [
        f"{v['id']}: {[n['target'] for n in v['nodes']][:3]}"
        for v in found
        if v["impact"] in ("serious", "critical")
    ]
    assert serious == [], (page.url, serious)


def check_page(page: Page, width: int) -> None:
    """No sideways scrolling, no control under 24 px, axe clean, no console errors (the page
    comes from ``open_as``, or had ``collect_errors``)."""
    assert page.evaluate("document.documentElement.scrollWidth") <= width, page.url
    assert page.evaluate(SMALL_CONTROLS) == [], page.url
    axe_clean(page)
    assert page.errors == [], page.url  # type: ignore[attr-defined]  # collected by the test


# --- A fight's dice ----------------------------------------------------------------------------


def a_hitting_roll(declaration: Declaration) -> int:
    """A plain success (no double, no 100) for the declared defense, from the engine's PvD."""
    declaration.encounter = declaration.attacker.encounter
    odds = services.declaration_odds(declaration)
    pro, dif = odds[declaration.defense]["pro"], odds[declaration.defense]["dif"]
    return next(r for r in range(dif + 1, pro + 1) if r % 11 and r != 100)


# --- Waiting for what the page does ------------------------------------------------------------

# The test is written into the function's source: Playwright compiles what it evaluates outside
# the page's CSP, which forbids eval and new Function to the page's own scripts.
_LISTEN = """([key, selector, type]) => {
  const target = selector === "document" ? document : document.querySelector(selector);
  const matches = TEST;
  window.__omgWaits = window.__omgWaits || {};
  window.__omgFired = window.__omgFired || {};
  window.__omgFired[key] = false;
  window.__omgWaits[key] = new Promise((resolve) => {
    const seen = (event) => {
      if (matches(event)) {
        target.removeEventListener(type, seen);
        window.__omgFired[key] = true;
        resolve(true);
      }
    };
    target.addEventListener(type, seen);
  });
}"""

_WAIT = """([key, ms]) => Promise.race([
  window.__omgWaits[key],
  new Promise((_, reject) => {
    setTimeout(() => reject(new Error(key + ": not within " + ms + " ms")), ms);
  }),
])"""


def listen(page: Page, key: str, selector: str, event: str, test: str = "() => true") -> None:
    """Arm ``key``: the next ``event`` on ``selector`` ("document" for the document) for which
    the JavaScript function ``test`` returns true."""
    page.evaluate(_LISTEN.replace("TEST", test), [key, selector, event])


def wait(page: Page, key: str, timeout_ms: int = 10_000) -> None:
    page.evaluate(_WAIT, [key, timeout_ms])


def fired(page: Page, key: str) -> bool:
    """Whether the event armed as ``key`` has happened yet (without waiting for it)."""
    return bool(page.evaluate("(key) => window.__omgFired[key]", key))


def move_clock_until(page: Page, done: Callable[[], bool], seconds: int = 30) -> None:
    """Moves the page's installed clock (``page.clock.install()``) on a second at a time, for at
    most ``seconds``, until ``done()``: what the page does after a number of seconds is not
    waited out, and a timer that starts a moment late (or again, when the part holding it is
    redrawn) is simply moved on further."""
    for _ in range(seconds):
        if done():
            return
        page.clock.fast_forward(1_000)
        # A short real pause between two moves: what a fired timer starts (a redraw, a fetch
        # and its answer) runs on real time, not on the page's installed clock.
        page.wait_for_timeout(50)
