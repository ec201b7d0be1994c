"""What the command line's commands share: the one-line failure, writing an answer's lines, colours, progress bars.

Light: imported before anything heavy.
"""

from __future__ import annotations

import os
import sys
import time

__all__ = ["QUIET_LIBRARIES", "EmbedProgress", "Failure", "Progress", "duration", "quiet_libraries", "style", "write"]


def style(args):
    """The colours of a listing on standard output (``--color``; :class:`codelex.output.Style`)."""
    from codelex.output import Style, use_colour

    return Style(use_colour(args.color, sys.stdout))


def write(lines) -> None:
    """Print an answer's lines (a renderer of :mod:`codelex.output`) on standard output."""
    for line in lines:
        sys.stdout.write(line + "\n")


class Progress:
    """A one-line progress bar on stderr for builds that last more than a second."""

    def __init__(self, stream, delay: float = 1.0) -> None:
        self.stream = stream
        self.start = time.monotonic()
        self.delay = delay
        self.shown = False
        self.last = 0.0

    def __call__(self, done: int, total: int, nbytes: int) -> None:
        self.draw("indexing", done, total, f"files, {nbytes / 2**20:,.0f} MiB")

    def draw(self, label: str, done: int, total: int, tail: str) -> None:
        now = time.monotonic()
        if now - self.start < self.delay or (now - self.last < 0.1 and done < total):
            return
        self.last = now
        width = 30
        filled = int(width * done / total) if total else width
        self.stream.write(f"\r\x1b[2K{label} [{'#' * filled}{'.' * (width - filled)}] {done:,}/{total:,} {tail}")
        self.stream.flush()
        self.shown = True

    def clear(self) -> None:
        if self.shown:
            self.stream.write("\r\x1b[2K")
            self.stream.flush()


class EmbedProgress(Progress):
    """The same bar while chunks are embedded, with the rate and the time left at that rate."""

    def __call__(self, done: int, total: int) -> None:  # type: ignore[override]
        rate = done / max(time.monotonic() - self.start, 1e-9)
        eta = f", {duration((total - done) / rate)} left" if rate > 0 and done < total else ""
        self.draw("embedding", done, total, f"chunks, {rate:,.0f}/s{eta}")


def duration(seconds: float) -> str:
    """``42 s``, ``3 min 05 s``, ``1 h 02 min``: an ETA as people read one."""
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"


#: Environment variables that silence the progress bars and advisories of the model libraries (tqdm,
#: huggingface_hub, transformers): read when those load, so set before a model does.
QUIET_LIBRARIES = {"TQDM_DISABLE": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1", "TRANSFORMERS_VERBOSITY": "error",
                   "TRANSFORMERS_NO_ADVISORY_WARNINGS": "1"}


def quiet_libraries() -> None:
    """Keep third-party progress bars off this process's stderr (``-q``, and always in the server, whose
    stderr a request captures: a library's bar would land in a client's answer)."""
    for name, value in QUIET_LIBRARIES.items():
        os.environ.setdefault(name, value)


class Failure(Exception):
    """An error to report as one line on stderr (exit status 2)."""
