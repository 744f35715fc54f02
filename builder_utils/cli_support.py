"""What every command of this package shares: ``--version``, when to show progress bars, and
diagnostics through ``logging``.

- :func:`add_version` gives a parser and all its subcommands ``--version``.
- :func:`progress_wanted`: progress bars only for a person watching. ``--quiet`` turns them
  off; otherwise ``HF_DATASETS_DISABLE_PROGRESS_BARS``, when set, decides (as it does for
  ``datasets``); otherwise they show only when stderr is a terminal, so a pipeline or a log
  file never fills with bar redraws.
- :func:`progress_bars` sets the global progress-bar switches of ``datasets`` and
  ``huggingface_hub`` for a block and puts back what was there, so a command called from
  Python (a notebook running a demo) leaves the caller's settings as they were. It imports
  neither (``datasets`` costs about a second of start-up): a library not imported yet reads
  the setting from its environment variable when the block imports it.
- :func:`log_to_stderr` shows the log records of the named package loggers (``clevr_math``,
  ``clotho_aqa``, ``builder_utils``) as ``<prog>: <message>`` lines on stderr while a command
  runs. Library code only logs (``logging.getLogger(__name__)``), so a notebook or a pipeline
  silences or captures it with the ``logging`` module.
- :func:`running` is the three together, for a command's ``main``.
- :func:`report_error` is every command's error line: ``<prog>: error: <message>``, one line
  (control characters escaped, so a file name holding a newline cannot split or forge it), an
  ``OSError`` named by its file; it returns the exit status 2.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import logging
import os
import sys
import warnings
from collections.abc import Iterator

from builder_utils.json_input import shown_path

DISTRIBUTION = "clevr-clotho-qa"
CORE_LOGGER = "builder_utils"
_TRUE = {"1", "ON", "YES", "TRUE"}  # datasets' own reading of the variable (config.ENV_VARS_TRUE_VALUES)


def version_text() -> str:
    """The version line of every command: this package, ``datasets``, Python.

    Example:
        >>> version_text().startswith("%(prog)s ")
        True
    """

    import importlib.metadata  # here, not at the top: it costs a tenth of a command's start-up
    import platform

    def version(name: str) -> str:
        try:
            return importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            return "not installed"

    return (f"%(prog)s ({DISTRIBUTION} {version(DISTRIBUTION)}; datasets {version('datasets')}; "
            f"Python {platform.python_version()})")


class _VersionAction(argparse._VersionAction):
    """argparse's ``version`` action, with the text looked up only when ``--version`` is given
    (the installed distributions' metadata is read then, not at every start)."""

    def __call__(self, parser, namespace, values, option_string=None):
        self.version = version_text()
        super().__call__(parser, namespace, values, option_string)


def add_version(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add ``--version`` to ``parser`` and to every subcommand parser it has (call it last).

    Example:
        >>> parser = argparse.ArgumentParser(prog="tool")
        >>> _ = parser.add_subparsers().add_parser("sub")
        >>> _ = add_version(parser)
        >>> try:
        ...     parser.parse_args(["sub", "--version"])
        ... except SystemExit as exit:
        ...     exit.code  # doctest: +ELLIPSIS
        tool sub (clevr-clotho-qa ...; datasets ...; Python ...)
        0
    """
    if "--version" not in parser._option_string_actions:
        parser.add_argument("--version", action=_VersionAction, help="print the version and exit")
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for subparser in set(action.choices.values()):
                add_version(subparser)
    return parser


def error_line(exc: BaseException) -> str:
    r"""The one-line message of an error: an ``OSError`` that names a file reads
    ``FILE: REASON`` (``No space left on device`` included); control characters are escaped.

    Example:
        >>> error_line(FileNotFoundError(2, "No such file or directory", "in\nput.json"))
        'in\\nput.json: No such file or directory'
        >>> error_line(ValueError("bad.json: line 2\n column 3"))
        'bad.json: line 2\\n column 3'
    """
    if isinstance(exc, OSError) and exc.filename is not None and exc.strerror:
        message = f"{shown_path(exc.filename)}: {exc.strerror}"
        if exc.filename2 is not None:
            message = f"{shown_path(exc.filename)} -> {shown_path(exc.filename2)}: {exc.strerror}"
    else:
        message = str(exc) or type(exc).__name__
    return shown_path(message.strip())


def report_error(prog: str, exc: BaseException) -> int:
    """Print ``<prog>: error: <message>`` (:func:`error_line`) on stderr; return the exit status 2.

    Example:
        >>> saved, sys.stderr = sys.stderr, sys.stdout   # to show the line here
        >>> report_error("tool", OSError(28, "No space left on device", "out/q.json"))
        tool: error: out/q.json: No space left on device
        2
        >>> sys.stderr = saved
    """
    print(f"{prog}: error: {error_line(exc)}", file=sys.stderr)
    return 2


def _env_disables_progress() -> bool | None:
    value = os.environ.get("HF_DATASETS_DISABLE_PROGRESS_BARS")
    return None if value is None else value.upper() in _TRUE


def progress_wanted(quiet: bool = False, stream=None) -> bool:
    """Whether to show progress bars: not with ``quiet``; as ``HF_DATASETS_DISABLE_PROGRESS_BARS``
    says when it is set; else only when ``stream`` (default: stderr) is a terminal.

    Example:
        >>> import io
        >>> progress_wanted(quiet=True), progress_wanted(stream=io.StringIO())
        (False, False)
    """
    if quiet:
        return False
    from_env = _env_disables_progress()
    if from_env is not None:
        return not from_env
    stream = sys.stderr if stream is None else stream
    return bool(getattr(stream, "isatty", lambda: False)())


# library -> (the module holding its progress-bar switches, the environment variable it reads at import)
_PROGRESS_SWITCHES = {
    "datasets": ("datasets.utils", "HF_DATASETS_DISABLE_PROGRESS_BARS"),
    "huggingface_hub": ("huggingface_hub.utils", "HF_HUB_DISABLE_PROGRESS_BARS"),
}


@contextlib.contextmanager
def progress_bars(enabled: bool) -> Iterator[bool]:
    """Switch ``datasets``' and ``huggingface_hub``'s progress bars on or off for the block, then
    restore their previous state. An environment variable that forces them keeps priority.

    A library that is not imported yet is not imported here: unless the user set its variable,
    the variable is set for the block (so an import inside the block follows the switch, and
    so do worker processes) and removed afterwards.

    Example:
        >>> import datasets
        >>> before = datasets.utils.are_progress_bars_disabled()
        >>> with progress_bars(False):
        ...     datasets.utils.are_progress_bars_disabled()
        True
        >>> datasets.utils.are_progress_bars_disabled() == before
        True
    """
    switches, variables = [], []
    for library, (module, variable) in _PROGRESS_SWITCHES.items():
        if library in sys.modules:
            utils = importlib.import_module(module)
            switches.append((utils.are_progress_bars_disabled, utils.disable_progress_bars, utils.enable_progress_bars))
        elif variable not in os.environ:
            variables.append(variable)
    for variable in variables:
        os.environ[variable] = "0" if enabled else "1"
    before = [is_disabled() for is_disabled, _, _ in switches]
    with warnings.catch_warnings():  # "cannot enable: the environment variable has priority"
        warnings.simplefilter("ignore")
        for _, disable, enable in switches:
            (enable if enabled else disable)()
    try:
        yield enabled
    finally:
        for variable in variables:
            os.environ.pop(variable, None)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for (_, disable, enable), was_disabled in zip(switches, before):
                (disable if was_disabled else enable)()


class _StderrHandler(logging.StreamHandler):
    """Writes to whatever ``sys.stderr`` is at the time (pytest's capture, a redirected stream)."""

    def __init__(self):
        super().__init__()

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, value):  # logging.StreamHandler.__init__ assigns it
        pass


class _CommandFormatter(logging.Formatter):
    def __init__(self, prog: str):
        super().__init__()
        self.prog = prog

    def format(self, record: logging.LogRecord) -> str:
        level = "" if record.levelno < logging.WARNING else f"{record.levelname.lower()}: "
        return f"{self.prog}: {level}{record.getMessage()}"


@contextlib.contextmanager
def log_to_stderr(prog: str, *packages: str, level: int = logging.INFO) -> Iterator[None]:
    """Show the records of the ``packages`` loggers (and ``builder_utils``) at ``level`` and above
    on stderr as ``<prog>: <message>`` (``<prog>: warning: <message>``) during the block.

    Example:
        >>> saved, sys.stderr = sys.stderr, sys.stdout   # to show the line here
        >>> with log_to_stderr("tool", "clevr_math"):
        ...     logging.getLogger("clevr_math.demo").info("wrote demo_output")
        ...     logging.getLogger("builder_utils.hub").warning("3 clips have no license")
        tool: wrote demo_output
        tool: warning: 3 clips have no license
        >>> sys.stderr = saved
    """
    handler = _StderrHandler()
    handler.setFormatter(_CommandFormatter(prog))
    loggers = [logging.getLogger(name) for name in dict.fromkeys((*packages, CORE_LOGGER))]
    saved = [(logger.level, logger.propagate) for logger in loggers]
    # A command run inside another (`clevr-math synth` runs synth's own main) keeps the outer
    # one's handler and name, and sets the level (its --quiet) for its own run.
    added = [logger for logger in loggers if not any(isinstance(h, _StderrHandler) for h in logger.handlers)]
    for logger in loggers:
        logger.setLevel(level)
        logger.propagate = False  # one line per record, even when the caller configured the root logger
    for logger in added:
        logger.addHandler(handler)
    try:
        yield
    finally:
        for logger in added:
            logger.removeHandler(handler)
        for logger, (old_level, propagate) in zip(loggers, saved):
            logger.setLevel(old_level)
            logger.propagate = propagate


@contextlib.contextmanager
def running(prog: str, *packages: str, quiet: bool = False) -> Iterator[bool]:
    """A command's run: log records on stderr (warnings and errors only with ``quiet``), progress
    bars as :func:`progress_wanted` says; yields whether to show progress bars.

    Example:
        >>> with running("tool", "clevr_math", quiet=True) as progress:
        ...     progress
        False
    """
    show = progress_wanted(quiet)
    with log_to_stderr(prog, *packages, level=logging.WARNING if quiet else logging.INFO), progress_bars(show):
        yield show
