"""The machinery of the safety suite: run a real command the way a careless or hostile user would,
then prove that nothing of the user's changed and that nothing of ours was left behind.

Each ``test_safety_*.py`` file of this folder holds one table of :class:`Case` rows for one
area (generator, builders, Hub export and push); :func:`run_case` does the work for every row:

1. ``case.setup(tmp_path)`` builds the situation (a user's folder, a symlink to a secret, a
   scene file named as its own output ...) and returns the command line;
2. the folder tree is snapshotted, the command runs as a real subprocess (the installed
   console script, started with the default signal dispositions whatever the suite's own: a
   suite started as a background job has SIGINT ignored, and its children would inherit that),
   optionally interrupted by a signal at the named point ``wait_at`` where the command waits
   for it (:mod:`builder_utils.wait_points`): by construction, not by timing;
3. the exit status, the message on stderr, the user's files (``protected``: paths relative to
   ``tmp_path``, compared by content, type and symlink target) and the debris (hidden temporary
   files, staging folders, live child processes) are checked.

A row, for example::

    Case(name="same input and output",
         setup=lambda tmp: ["generate-questions", "--input_scene_file", str(tmp / "s.json"),
                            "--output_questions_file", str(tmp / "s.json")],
         exit_code=2, stderr_has="same file", protected=["s.json"])
"""

from __future__ import annotations

import dataclasses
import fnmatch
import hashlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

# What our commands may create while they run and must never leave behind: atomic-write temp
# files, export staging folders, retired folders of a swap.
DEBRIS_PATTERNS = (".*.tmp", ".export-*", ".*.old-*", ".staging-*")


def script(name: str) -> str:
    """The console script ``name`` of the environment running the tests (``.venv/bin/<name>``)."""
    candidate = Path(sys.executable).parent / name
    return str(candidate) if candidate.exists() else name


# Every signal whose disposition a child inherits when it is ignored here: the commands keep an
# ignored SIGINT ignored (rightly), so the suite must not hand them one.
_RESET_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGQUIT, signal.SIGHUP, signal.SIGPIPE, signal.SIGUSR1,
                  signal.SIGUSR2, signal.SIGTSTP, signal.SIGTTIN, signal.SIGTTOU)


def _default_signals() -> None:
    # in the child, before exec: default dispositions and an empty signal mask
    for signum in _RESET_SIGNALS:
        signal.signal(signum, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_SETMASK, ())


def start(argv: Sequence[str], **kwargs) -> subprocess.Popen:
    """``subprocess.Popen(argv, **kwargs)`` with the default signal dispositions in the child,
    whatever this process ignores or blocks. Every command under test starts here."""
    return subprocess.Popen(list(argv), preexec_fn=_default_signals, **kwargs)


def run(argv: Sequence[str], timeout: float = 300.0, **kwargs) -> subprocess.CompletedProcess:
    """``subprocess.run`` through :func:`start` (text output captured)."""
    process = start(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kwargs)
    try:
        out, err = process.communicate(timeout=timeout)
    except BaseException:
        process.kill()
        process.wait()
        raise
    return subprocess.CompletedProcess(list(argv), process.returncode, out, err)


class WaitPoint:
    """The environment that makes a command wait at the named point (``NAME`` or ``NAME@N``,
    see :mod:`builder_utils.wait_points`), and the file that says it is waiting there. The
    folder lies outside the test's tree, so that no snapshot or debris check sees it."""

    def __init__(self, point: str):
        from builder_utils.wait_points import WAIT_AT, WAIT_DIR

        self.folder = Path(tempfile.mkdtemp(prefix="wait-point-"))
        self.marker = self.folder / f"{point.partition('@')[0]}.waiting"
        self.env = {WAIT_AT: point, WAIT_DIR: str(self.folder)}

    def reached(self) -> bool:
        return self.marker.exists()

    def release(self) -> None:
        """Let the waiting process go on (after the signal: a wait where signals are held)."""
        self.marker.unlink(missing_ok=True)

    def close(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


def wait_until(process: subprocess.Popen, reached: Callable[[], bool], timeout: float, what: str) -> None:
    """Poll ``reached()`` every 20 ms until it holds; an AssertionError if the process ended first
    (a point it never reaches) or ``timeout`` passed."""
    deadline = time.monotonic() + timeout
    while not reached():
        if process.poll() is not None:
            err = process.stderr.read() if process.stderr else ""
            raise AssertionError(f"{what}: the command ended before the interrupt point "
                                 f"(status {process.returncode}): {err}")
        if time.monotonic() > deadline:
            process.kill()
            raise AssertionError(f"{what}: the interrupt point was never reached")
        time.sleep(0.02)


def snapshot(root: str | os.PathLike) -> dict[str, tuple]:
    """Every path under ``root`` (symlinks not followed) -> (kind, content digest or link target, mode)."""
    root = Path(root)
    tree: dict[str, tuple] = {}
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            rel = path.relative_to(root).as_posix()
            if path.is_symlink():
                tree[rel] = ("link", os.readlink(path), None)
            elif path.is_dir():
                tree[rel] = ("dir", None, path.stat().st_mode & 0o7777)
            else:
                tree[rel] = ("file", hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mode & 0o7777)
    return tree


def changed(before: dict[str, tuple], after: dict[str, tuple], paths: Sequence[str]) -> list[str]:
    """Those of ``paths`` (globs relative to the snapshot root) whose entries differ or vanished.

    A glob that names a folder covers everything under it.
    """
    hits = []
    for pattern in paths:
        selected = [p for p in before if fnmatch.fnmatch(p, pattern) or fnmatch.fnmatch(p, pattern.rstrip("/") + "/*")]
        if not selected:
            raise AssertionError(f"safety case protects {pattern!r}, which its setup never created")
        hits += [p for p in selected if after.get(p) != before[p]]
    return sorted(hits)


def debris(root: str | os.PathLike, patterns: Sequence[str] = DEBRIS_PATTERNS) -> list[str]:
    """Paths under ``root`` whose name matches one of ``patterns`` (temporary files, staging)."""
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            if any(fnmatch.fnmatch(name, pattern) for pattern in patterns):
                found.append((Path(dirpath) / name).relative_to(root).as_posix())
    return sorted(found)


def _children(pid: int) -> list[int]:
    """Live processes whose parent is ``pid`` (Linux /proc)."""
    kids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            kids.append(int(entry.name))
    return kids


def _descendants(pid: int) -> list[int]:
    found, todo = [], [pid]
    while todo:
        kids = _children(todo.pop())
        found += kids
        todo += kids
    return found


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


@dataclasses.dataclass
class Case:
    """One way a user can misuse a command, and what must hold afterwards.

    Attributes:
        name: what the user does, as the test id.
        setup: builds the situation under ``tmp_path``; returns the command line (its first item
            a console script name such as ``"clevr-math"``).
        exit_code: the expected exit status (``None``: any).
        stderr_has: a piece of text the error message must contain (case-insensitive).
        protected: globs, relative to ``tmp_path``, of the user's files that must survive unchanged.
        no_debris_under: folders (relative to ``tmp_path``) that must hold no temporary files or
            staging folders afterwards.
        interrupt: a signal to send once the command waits at ``wait_at``.
        wait_at: the named point where the command waits for ``interrupt``
            (:mod:`builder_utils.wait_points`), ``NAME`` or ``NAME@N``; default: send it at once.
        interrupt_when: for commands without wait points (a shell script): the moment to send
            it (polled every 20 ms). Never a moment the command may pass before it is polled.
        check: any further assertions, called with ``(tmp_path, completed_process)``.
        timeout: seconds before the command counts as hung.
        env: environment variables set for the command; a value ``"{tmp}"`` in it is replaced
            by ``tmp_path`` (e.g. ``{"TMPDIR": "{tmp}/tmp"}``).
        interrupt_group: send ``interrupt`` to the command's whole process group, as Ctrl-C in a
            terminal does (the command then runs in a session of its own).
    """

    name: str
    setup: Callable[[Path], list[str]]
    exit_code: int | None = 0
    stderr_has: str | None = None
    protected: Sequence[str] = ()
    no_debris_under: Sequence[str] = (".",)
    interrupt: int | None = None
    wait_at: str | None = None
    interrupt_when: Callable[[Path], bool] | None = None
    check: Callable[[Path, subprocess.CompletedProcess], None] | None = None
    timeout: float = 300.0
    env: dict[str, str] = dataclasses.field(default_factory=dict)
    interrupt_group: bool = False


def _run(argv: list[str], case: Case, tmp_path: Path, env: dict) -> subprocess.CompletedProcess:
    point = WaitPoint(case.wait_at) if case.wait_at is not None else None
    try:
        return _run_at(argv, case, tmp_path, {**env, **(point.env if point else {})}, point)
    finally:
        if point is not None:
            point.close()


def _run_at(argv: list[str], case: Case, tmp_path: Path, env: dict, point: WaitPoint | None):
    process = start(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                    cwd=tmp_path, start_new_session=case.interrupt_group)
    if case.interrupt is None:
        out, err = process.communicate(timeout=case.timeout)
        return subprocess.CompletedProcess(argv, process.returncode, out, err)
    if point is not None:
        wait_until(process, point.reached, case.timeout, case.name)
    elif case.interrupt_when is not None:
        wait_until(process, lambda: case.interrupt_when(tmp_path), case.timeout, case.name)
    family = _descendants(process.pid)
    if case.interrupt_group:
        os.killpg(process.pid, case.interrupt)
    else:
        process.send_signal(case.interrupt)
    if point is not None:
        point.release()
    out, err = process.communicate(timeout=case.timeout)
    # the workers must be gone too, not only the main process
    deadline = time.monotonic() + 10
    while any(_alive(pid) for pid in family) and time.monotonic() < deadline:
        time.sleep(0.05)
    orphans = [pid for pid in family if _alive(pid)]
    for pid in orphans:
        os.kill(pid, signal.SIGKILL)
    if orphans:
        raise AssertionError(f"{case.name}: worker processes {orphans} outlived the interrupted command")
    return subprocess.CompletedProcess(argv, process.returncode, out, err)


def run_case(case: Case, tmp_path: Path) -> subprocess.CompletedProcess:
    """Set up, run and check one :class:`Case`; returns the finished process for further checks."""
    argv = case.setup(tmp_path)
    argv = [script(argv[0]), *argv[1:]]
    before = snapshot(tmp_path)
    env = {**os.environ, "HF_DATASETS_DISABLE_PROGRESS_BARS": "1", "HF_HUB_OFFLINE": "1",
           **{name: value.replace("{tmp}", str(tmp_path)) for name, value in case.env.items()}}
    done = _run(argv, case, tmp_path, env)
    detail = f"{case.name}: status {done.returncode}\nstdout: {done.stdout[-2000:]}\nstderr: {done.stderr[-2000:]}"
    if case.exit_code is not None:
        assert done.returncode == case.exit_code, detail
    if case.stderr_has is not None:
        assert case.stderr_has.lower() in done.stderr.lower(), detail
        assert "Traceback" not in done.stderr, detail
    lost = changed(before, snapshot(tmp_path), case.protected)
    assert not lost, f"{case.name}: the user's files changed or vanished: {lost}"
    for folder in case.no_debris_under:
        left = debris(tmp_path / folder)
        assert not left, f"{case.name}: debris left behind under {folder}: {left}"
    if case.check is not None:
        case.check(tmp_path, done)
    return done


def kill_at(tmp: Path, argv: list[str], point: str = "commit", timeout: float = 240) -> None:
    """``argv`` (run in ``tmp``) killed with SIGKILL at the wait point ``point`` (``commit``:
    everything staged, nothing moved), reached by construction, not by timing; it must leave
    debris (a staging folder) for the re-run to deal with."""
    wait = WaitPoint(point)
    process = start([script(argv[0]), *argv[1:]], cwd=tmp, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                    text=True, start_new_session=True, env={**os.environ, **wait.env})
    try:
        wait_until(process, wait.reached, timeout, f"{' '.join(argv[:2])}: kill -9")
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        wait.close()
    assert debris(tmp), "the kill -9 left no staging folder"
