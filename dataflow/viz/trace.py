"""Exporting a traced step (``RunMetadata``) to the Chrome / Perfetto trace format."""

from __future__ import annotations

import json
from typing import Any


def write_chrome_trace(run_metadata: Any, path: str) -> str:
    """Writes ``run_metadata``'s per-op timings as a Chrome trace JSON file (open it in
    ``chrome://tracing`` or ui.perfetto.dev); returns ``path``."""
    with open(path, "w") as f:
        json.dump(run_metadata.chrome_trace(), f)
    return path
