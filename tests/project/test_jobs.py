"""The background-job abstraction every stage of a project runs on (project/jobs.py)."""

from __future__ import annotations

import logging
import threading
import time

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from codelex.project.jobs import Cancelled, DebouncedSaver, Job


def _until(predicate, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.005)
    return True


@pytest.mark.timeout(30)
def test_wait_is_bounded_by_its_timeout():
    job = Job("waiting")
    release = threading.Event()
    job.start(lambda generation: release.wait(10))
    started = time.monotonic()
    assert job.wait(0.1) is False  # still running: the wait gave up at its bound
    assert time.monotonic() - started < 2
    assert job.running and job.state == "building"
    release.set()
    assert job.wait(5) is True
    assert job.state == "idle" and not _until(lambda: job.running, 0.05)  # ended without saying how: ``after``


@pytest.mark.timeout(30)
def test_a_cancelled_generation_stops_at_its_next_check_and_never_publishes():
    job = Job("cancellable")
    at_check = threading.Event()
    go_on = threading.Event()
    published = []

    def work(generation: int) -> None:
        at_check.set()
        go_on.wait(5)
        job.check(generation)  # raises Cancelled: the generation no longer counts
        published.append(generation)
        job.finish(generation, "ready")

    generation = job.start(work)
    assert at_check.wait(5)
    assert job.cancel(generation - 1) is False  # an older generation: nothing to cancel
    assert job.cancel(generation, state="idle") is True
    assert not job.current(generation)
    go_on.set()
    assert job.join(5)
    assert published == [] and job.state == "idle"
    assert job.finish(generation, "ready") is False  # a superseded run cannot publish late
    with pytest.raises(Cancelled):
        job.check(generation)


@pytest.mark.timeout(30)
def test_a_newer_run_supersedes_the_older_one():
    job = Job("superseded")
    first = job.begin()
    second = job.begin()
    assert not job.current(first) and job.current(second)
    assert job.finish(first, "ready") is False and job.state == "building"
    assert job.finish(second, "ready") is True and job.state == "ready"


@pytest.mark.timeout(30)
def test_an_error_is_reported_not_raised(caplog):
    job = Job("breaking things")

    def work(generation: int) -> None:
        raise ValueError("no luck")

    with caplog.at_level(logging.WARNING, logger="codelex"):
        job.start(work)
        assert job.join(5) and job.wait(5)
    assert job.state == "failed" and job.reason == job.error == "ValueError: no luck"
    assert "breaking things failed" in caplog.text
    assert job.status()["error"] == "ValueError: no luck"
    with pytest.raises(ValueError):  # a caller that asks for the error gets it
        job.run(job.begin(), work, raise_errors=True)


@pytest.mark.timeout(30)
def test_close_stops_and_joins_the_thread_within_a_bound():
    job = Job("closing")
    stopped = []

    def work(generation: int) -> None:
        while job.current(generation):
            time.sleep(0.01)
        stopped.append(generation)

    generation = job.start(work)
    assert job.close(timeout=5) is True
    assert stopped == [generation] and not job.thread.is_alive()
    assert job.start(work) is None  # closed: nothing new starts
    assert job.wait(None) is True  # and no wait blocks on a closed job


@pytest.mark.timeout(30)
def test_close_gives_up_on_a_thread_that_ignores_it(caplog):
    job = Job("stubborn")
    release = threading.Event()
    job.start(lambda generation: release.wait(10))
    started = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="codelex"):
        assert job.close(timeout=0.1) is False
    assert time.monotonic() - started < 2
    assert "stubborn did not stop" in caplog.text
    release.set()
    assert job.join(5)


def test_a_job_started_is_stopped_at_exit():
    from codelex import runtime

    job = Job("at exit")
    release = threading.Event()
    job.start(lambda generation: release.wait(10))
    with runtime._exit_lock:
        registered = job in set(runtime._exit_jobs)
    release.set()
    assert registered
    assert job.join(5)


class _Saveable:
    def __init__(self) -> None:
        self.saves: list[str] = []

    def save(self, path) -> None:
        self.saves.append(str(path))


@pytest.mark.timeout(30)
def test_the_debounced_saver_coalesces_a_burst_into_one_save(tmp_path):
    saver = DebouncedSaver(lambda: tmp_path)
    target = _Saveable()
    for _ in range(50):
        saver.schedule(target, debounce_ms=100)
    assert saver.pending and target.saves == []
    assert _until(lambda: target.saves, 5)
    time.sleep(0.3)
    assert target.saves == [str(tmp_path)] and not saver.pending
    # Another object: the previous one's pending save is written first, then the new one's after its window.
    saver.schedule(target, debounce_ms=10_000)
    other = _Saveable()
    saver.schedule(other, debounce_ms=10_000)
    assert len(target.saves) == 2 and other.saves == []
    saver.close()  # a pending save is written on close
    assert other.saves == [str(tmp_path)]
    saver.schedule(other, debounce_ms=10_000)
    saver.cancel()  # dropped
    assert other.saves == [str(tmp_path)] and not saver.pending


class JobMachine(RuleBasedStateMachine):
    """Runs in callers' threads, started, superseded, finished, failed, cancelled and stopped in any order:
    only the current generation ever changes the state, and the state is what the model says."""

    def __init__(self) -> None:
        super().__init__()
        self.job = Job("modelled")
        self.model_generation = 0
        self.model_state = "idle"
        self.closed = False
        self.issued: list[int] = []

    @rule()
    def begin(self):
        self.issued.append(self.job.begin())
        self.model_generation += 1
        self.model_state = "building"

    @precondition(lambda self: self.issued)
    @rule(pick=st.integers(min_value=0), state=st.sampled_from(["ready", "idle"]))
    def finish(self, pick, state):
        generation = self.issued[pick % len(self.issued)]
        counts = generation == self.model_generation and not self.closed
        assert self.job.finish(generation, state) is counts
        if counts:
            self.model_state = state

    @precondition(lambda self: self.issued)
    @rule(pick=st.integers(min_value=0))
    def fail(self, pick):
        generation = self.issued[pick % len(self.issued)]
        counts = generation == self.model_generation and not self.closed
        assert self.job.fail(generation, "RuntimeError: x") is counts
        if counts:
            self.model_state = "failed"

    @precondition(lambda self: self.issued)
    @rule(pick=st.integers(min_value=0))
    def run_here(self, pick):
        generation = self.issued[pick % len(self.issued)]
        counts = generation == self.model_generation and not self.closed
        self.job.run(generation, lambda g: None)
        if counts and self.model_state == "building":
            self.model_state = "idle"

    @rule(latest=st.booleans())
    def cancel(self, latest):
        generation = self.model_generation if latest else self.model_generation - 1
        done = self.job.cancel(generation, state="idle")
        assert done is latest
        if latest:
            self.model_generation += 1
            self.model_state = "idle"

    @rule()
    def stop(self):
        self.job.stop()
        self.closed = True
        self.model_generation += 1

    @invariant()
    def agrees(self):
        assert self.job.generation == self.model_generation
        assert self.job.state == self.model_state
        assert self.job.closed == self.closed
        for generation in self.issued:
            assert self.job.current(generation) == (generation == self.model_generation and not self.closed)
        assert self.job.wait(0) is (self.model_state != "building" or self.closed)


TestJobMachine = JobMachine.TestCase
TestJobMachine.settings = settings(max_examples=200, stateful_step_count=30, deadline=None)


def test_a_wait_for_the_build_report_ends_when_the_report_is_published(tmp_path):
    """Regression (review of issue 40): the report follows the save, after the build's job has published; a wait
    on the job's condition for it (MCP ``reindex``) must be told then, not sleep out its whole bound."""
    import time

    from codelex import Project

    (tmp_path / "a.py").write_text("def alpha():\n    return 1\n")
    with Project(tmp_path, build_structure=False, import_graph=False) as project:
        project.open()
        before = project.last_report
        assert project.refresh_in_background(full=True)
        started = time.monotonic()
        assert project.service.wait_build_until(lambda: project.last_report is not before, 60)
        assert time.monotonic() - started < 30, "the wait was not told of the report"
        assert project.last_report is not before and project.last_report.mode == "full"
