"""Write static/vendor/lucide/icons.svg: one SVG sprite of the Lucide icons the pages use.

Maintainers run it after `npm pack lucide-static` and unpacking the tarball:
    python scripts/build_icons.py path/to/package/icons
then add the new name to ICONS and use it in a template with {% icon "name" %}.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ICONS = (
    "activity",
    "arrow-down-to-line",
    "bed",
    "book-open",
    "chevrons-right",
    "circle-x",
    "clover",
    "crosshair",
    "dices",
    "download",
    "eye",
    "eye-off",
    "flame",
    "footprints",
    "hand",
    "hand-grab",
    "heart",
    "heart-crack",
    "info",
    "keyboard",
    "log-out",
    "menu",
    "minus",
    "moon-star",
    "move-right",
    "play",
    "plus",
    "printer",
    "scroll-text",
    "settings-2",
    "shield",
    "shield-half",
    "skip-forward",
    "skull",
    "sparkles",
    "sword",
    "swords",
    "timer",
    "triangle-alert",
    "undo-2",
    "user-round",
    "users",
    "wind",
    "x",
    "zap-off",
    "house",
)

OUT = Path(__file__).resolve().parent.parent / "static" / "vendor" / "lucide" / "icons.svg"


def symbol(name: str, source: str) -> str:
    inner = re.search(r"<svg[^>]*>(.*)</svg>", source, re.S)
    if inner is None:
        raise SystemExit(f"{name}: not an SVG")
    body = " ".join(line.strip() for line in inner.group(1).strip().splitlines())
    return f'<symbol id="{name}" viewBox="0 0 24 24">{body}</symbol>'


def main(icons_dir: str) -> None:
    folder = Path(icons_dir)
    symbols = [symbol(n, (folder / f"{n}.svg").read_text()) for n in sorted(ICONS)]
    OUT.write_text(
        "<!-- Lucide icons (ISC licence, see LICENSE beside this file) -->\n"
        '<svg xmlns="http://www.w3.org/2000/svg" fill="none" stroke="currentColor" '
        'stroke-width="2" stroke-linecap="round" stroke-linejoin="round">\n'
        + "\n".join(symbols)
        + "\n</svg>\n"
    )
    print(f"{len(symbols)} icons -> {OUT}")


if __name__ == "__main__":
    main(sys.argv[1])
