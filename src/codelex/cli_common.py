"""What the command line's commands share: the one-line failure, writing an answer's lines, colours, progress bars.

Light: imported before anything heavy.
"""

from __future__ import annotations

import os
import sys
import time

__all__ = ["PLAIN_PROGRESS_DELAY_S", "PLAIN_PROGRESS_EVERY_S", "QUIET_LIBRARIES", "EmbedProgress", "Failure",
           "Progress", "bad_max_bytes", "check_query", "duration", "interrupt_again", "progress_for",
           "quiet_libraries", "style", "write"]


def style(args):
    """The colours of a listing on standard output (``--color``; :class:`codelex.output.Style`)."""
    from codelex.output import Style, use_colour

    return Style(use_colour(args.color, sys.stdout))


def write(lines) -> None:
    """Print an answer's lines (a renderer of :mod:`codelex.output`) on standard output."""
    for line in lines:
        sys.stdout.write(line + "\n")


#: On a stderr that is not a terminal (a CI log, a pipe), a long piece of work says how far it is in a plain
#: line: the first once it has lasted this long (none for shorter work), then at most one every
#: :data:`PLAIN_PROGRESS_EVERY_S`.
PLAIN_PROGRESS_DELAY_S = 5.0
PLAIN_PROGRESS_EVERY_S = 10.0


class Progress:
    """How far a build is, on stderr: a one-line bar redrawn in place (a terminal) for builds that last more
    than ``delay`` seconds; ``plain``, a line such as ``codelex: indexing 1,200 of 3,643 files (12 MiB)`` now
    and then instead (:data:`PLAIN_PROGRESS_DELAY_S`, :data:`PLAIN_PROGRESS_EVERY_S`).  ``clock`` is
    :func:`time.monotonic` (a test's fake one)."""

    def __init__(self, stream, delay: float | None = None, *, plain: bool = False, clock=time.monotonic) -> None:
        self.stream = stream
        self.clock = clock
        self.start = clock()
        self.plain = plain
        self.delay = (PLAIN_PROGRESS_DELAY_S if plain else 1.0) if delay is None else delay
        self.every = PLAIN_PROGRESS_EVERY_S if plain else 0.1
        self.shown = False
        self.last = 0.0

    def __call__(self, done: int, total: int, nbytes: int) -> None:
        self.draw("indexing", done, total, "files", f"{nbytes / 2**20:,.0f} MiB")

    def draw(self, label: str, done: int, total: int, unit: str, detail: str) -> None:
        now = self.clock()
        if now - self.start < self.delay:
            return
        if self.plain:  # (no line for the end: the command's own summary follows)
            if done >= total or (self.shown and now - self.last < self.every):
                return
            self.stream.write(f"codelex: {label} {done:,} of {total:,} {unit} ({detail})\n")
        else:
            if now - self.last < self.every and done < total:
                return
            width = 30
            filled = int(width * done / total) if total else width
            self.stream.write(f"\r\x1b[2K{label} [{'#' * filled}{'.' * (width - filled)}] {done:,}/{total:,} "
                              f"{unit}, {detail}")
        self.stream.flush()
        self.last = now
        self.shown = True

    def clear(self) -> None:
        if self.shown and not self.plain:
            self.stream.write("\r\x1b[2K")
            self.stream.flush()


class EmbedProgress(Progress):
    """The same while chunks are embedded, with the rate and the time left at that rate."""

    def __call__(self, done: int, total: int) -> None:  # type: ignore[override]
        rate = done / max(self.clock() - self.start, 1e-9)
        eta = f", {duration((total - done) / rate)} left" if rate > 0 and done < total else ""
        self.draw("embedding", done, total, "chunks", f"{rate:,.0f}/s{eta}")


def progress_for(kind, stream, tty: bool, *, quiet: bool = False):
    """A ``kind`` (:class:`Progress`, :class:`EmbedProgress`) for ``stream``: the bar on a terminal; elsewhere the
    plain lines, or nothing when ``quiet`` (``-q``, or a machine format asked for on stdout)."""
    if tty:
        return kind(stream)
    return None if quiet else kind(stream, plain=True)


#: Why a query of ``search``, ``code`` and ``cluster search`` can have no searchable words (their tokens:
#: :func:`codelex.text.tokenize.tokenize_line`).
NO_CODE_WORDS = "only stop words, one-letter words, numbers or punctuation"


def check_query(query: str, words=None, *, why: str = NO_CODE_WORDS, filters_only: bool = False) -> None:
    """Every query command's one rule: an empty (or blank) query, or one with no searchable ``words`` (None: not
    checked here), fails in one line (exit status 2), in-process and served alike."""
    if not query.strip():
        raise Failure("the query is empty: give words to search for")
    if words is not None and not words:
        if filters_only:
            raise Failure("the query has only filters: add words to search for")
        raise Failure(f"the query has no searchable words ({why})")


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


def interrupt_again(hook_args, previous=sys.unraisablehook) -> None:
    """A ctrl-c that lands in a callback Python cannot raise from (a weakref or ``__del__``): deliver it
    again to the main thread, where the command's own handler reports it, instead of a printed traceback."""
    if isinstance(hook_args.exc_value, KeyboardInterrupt):
        import _thread

        _thread.interrupt_main()
        return
    previous(hook_args)


def bad_max_bytes(args) -> bool:
    """A negative ``--max-bytes``, said on stderr."""
    if getattr(args, "max_bytes", None) is not None and args.max_bytes < 0:
        print("codelex: --max-bytes must be >= 0", file=sys.stderr)
        return True
    return False
