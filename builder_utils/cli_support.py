"""What every command shares: ``--version``, when to show progress bars, log records on stderr, the error line.

Library code only logs (``logging.getLogger(__name__)``), so a notebook or a pipeline silences or
captures it; :func:`running` is what a command's ``main`` enters.
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
    """argparse's ``version`` action, the metadata read only when ``--version`` is given (not at every start)."""

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
    r"""The one-line message of an error (``FILE: REASON`` for an ``OSError``).

    Control characters are escaped, so a file name holding a newline cannot split or forge the line.

    Example:
        >>> error_line(FileNotFoundError(2, "No such file or directory", "in\nput.json"))
        'in\\nput.json: No such file or directory'
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
    says when set; else only for a terminal, so a pipeline or log never fills with redraws.

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
    """Switch ``datasets``' and ``huggingface_hub``'s progress bars for the block, then restore them
    (a notebook running a demo keeps its settings); a variable the user set keeps priority.

    A library not imported yet is not imported (``datasets`` costs a second of start-up): its
    variable is set for the block instead, which worker processes follow too.

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
    """Show the records of the ``packages`` loggers (and ``builder_utils``) on stderr during the block.

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
    """A command's run: log records on stderr, progress bars as :func:`progress_wanted` says (yielded).

    Example:
        >>> with running("tool", "clevr_math", quiet=True) as progress:
        ...     progress
        False
    """
    show = progress_wanted(quiet)
    with log_to_stderr(prog, *packages, level=logging.WARNING if quiet else logging.INFO), progress_bars(show):
        yield show
