"""Waiting for what the page does, not for a fixed time.

``listen`` arms a promise in the page for the next DOM event that matches; ``wait`` blocks
until it has fired (or fails after a timeout). Armed before the action that causes the event,
it cannot miss it, and the test goes on the moment the page has done its part: an htmx
answer handled (swapped or dropped), a pushed tracker received.
"""

from __future__ import annotations

from collections.abc import Callable

from playwright.sync_api import Page

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
        page.wait_for_timeout(50)
