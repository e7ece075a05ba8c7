"""Headless-Chromium screenshots for the docs, shared by ``dashboard_screenshot.py`` and
``graph_view_screenshot.py``. Needs a ``chromium`` (or ``chromium-browser``,
``google-chrome``) executable on ``PATH``: on Debian, ``apt-get install chromium``.
"""

from __future__ import annotations

import pathlib
import shutil
import subprocess
import tempfile

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def browser() -> str:
    """The first of ``BROWSERS`` on ``PATH``; exits with a message when there is none."""
    for name in BROWSERS:
        found = shutil.which(name)
        if found:
            return found
    raise SystemExit(f"no headless browser found (tried {', '.join(BROWSERS)})")


def screenshot(url: str, out: pathlib.Path, size: str, virtual_time_ms: int) -> None:
    """Writes a PNG of ``url`` to ``out``, in a ``size`` (``"width,height"``) window,
    after ``virtual_time_ms`` of the page's own time (its scripts and timers), in a
    throwaway browser profile."""
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run(
            [
                browser(),
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                f"--user-data-dir={profile}",
                "--hide-scrollbars",
                f"--window-size={size}",
                f"--virtual-time-budget={virtual_time_ms}",
                f"--screenshot={out}",
                url,
            ],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=120,
        )
