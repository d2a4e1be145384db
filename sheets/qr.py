"""QR codes for links shown at the table (the join link, the display link), made by segno and
drawn by a template (templates/sheets/_qr.html) as inline SVG: no image request, no script, no
style attribute for the page's CSP to block, and no markup marked safe."""

from __future__ import annotations

from dataclasses import dataclass

import segno

# A scanner needs the quiet zone around the code to find it, most of all on a dark page.
QUIET_ZONE = 4


@dataclass(frozen=True)
class QrCode:
    data: str
    size: int  # modules per side, quiet zone included
    path: str  # SVG path data: one horizontal stroke per run of dark modules


def qr_code(data: str) -> QrCode:
    """The QR code of ``data``, as SVG path data on a square of ``size`` modules.

    Error correction M survives a phone camera at an angle across a table.

    >>> code = qr_code("https://example.org/campaigns/join/?code=ABCD2345")
    >>> code.size, code.path[:8]
    (41, 'M4 4.5h7')
    """
    matrix = segno.make(data, error="m", micro=False).matrix
    runs = []
    for y, row in enumerate(matrix):
        x = 0
        while x < len(row):
            if row[x]:
                start = x
                while x < len(row) and row[x]:
                    x += 1
                runs.append(f"M{start + QUIET_ZONE} {y + QUIET_ZONE}.5h{x - start}")
            else:
                x += 1
    return QrCode(data=data, size=len(matrix) + 2 * QUIET_ZONE, path="".join(runs))
