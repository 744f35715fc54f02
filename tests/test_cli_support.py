"""builder_utils.cli_support: --version everywhere, the progress-bar policy, logging to stderr."""

from __future__ import annotations

import argparse
import logging
import os

import datasets.utils
import huggingface_hub.utils as hub_utils
import pytest

from builder_utils.cli_support import add_version, log_to_stderr, progress_bars, progress_wanted, running


@pytest.fixture
def terminal():
    """A real terminal (a pseudo-terminal's end), as stderr is when a person runs a command."""
    leader, follower = os.openpty()
    stream = os.fdopen(follower, "w")
    yield stream
    stream.close()
    os.close(leader)


@pytest.fixture
def pipe(tmp_path):
    with open(tmp_path / "log.txt", "w") as stream:
        yield stream


@pytest.mark.parametrize(
    "env, quiet, on_terminal, on_pipe",
    [
        (None, False, True, False),  # a person watching gets bars; a pipeline or a log file does not
        (None, True, False, False),
        ("1", False, False, False),  # the variable of datasets has priority
        ("true", False, False, False),
        ("0", False, True, True),
        ("0", True, False, False),  # an explicit --quiet still wins
    ],
)
def test_progress_policy(monkeypatch, terminal, pipe, env, quiet, on_terminal, on_pipe):
    if env is None:
        monkeypatch.delenv("HF_DATASETS_DISABLE_PROGRESS_BARS", raising=False)
    else:
        monkeypatch.setenv("HF_DATASETS_DISABLE_PROGRESS_BARS", env)
    assert progress_wanted(quiet, stream=terminal) is on_terminal
    assert progress_wanted(quiet, stream=pipe) is on_pipe


@pytest.mark.parametrize("start_disabled", [False, True])
@pytest.mark.parametrize("enabled", [False, True])
def test_progress_bars_restores_both_libraries_state(start_disabled, enabled):
    set_datasets = datasets.utils.disable_progress_bars if start_disabled else datasets.utils.enable_progress_bars
    set_hub = hub_utils.disable_progress_bars if start_disabled else hub_utils.enable_progress_bars
    set_datasets(), set_hub()
    try:
        with pytest.raises(RuntimeError):
            with progress_bars(enabled):
                assert datasets.utils.are_progress_bars_disabled() is (not enabled)
                assert hub_utils.are_progress_bars_disabled() is (not enabled)
                raise RuntimeError("a failing command restores the state too")
        assert datasets.utils.are_progress_bars_disabled() is start_disabled
        assert hub_utils.are_progress_bars_disabled() is start_disabled
    finally:
        datasets.utils.enable_progress_bars(), hub_utils.enable_progress_bars()


def test_log_records_reach_stderr_with_the_program_name_and_leave_no_handler(capsys):
    logger = logging.getLogger("clotho_aqa.release")
    package = logging.getLogger("clotho_aqa")
    level, handlers = package.level, list(package.handlers)
    with log_to_stderr("clotho-aqa export", "clotho_aqa"):
        logger.info("wrote hub/README.md")
        logger.debug("not shown at INFO")
        logging.getLogger("builder_utils.hub.export").warning("2 clips have no license")
    err = capsys.readouterr().err
    assert err == "clotho-aqa export: wrote hub/README.md\nclotho-aqa export: warning: 2 clips have no license\n"
    assert package.level == level and package.handlers == handlers
    logger.warning("after the command: through logging's own defaults")
    assert "clotho-aqa export:" not in capsys.readouterr().err


def test_running_with_quiet_shows_only_warnings(capsys):
    with running("generate-questions", "builder_utils", quiet=True) as progress:
        logging.getLogger("builder_utils.clevr").info("generated 10 questions")
        logging.getLogger("builder_utils.clevr").warning("template x never succeeded")
    assert progress is False
    assert capsys.readouterr().err == "generate-questions: warning: template x never succeeded\n"


def test_version_on_a_parser_and_every_subcommand(capsys):
    parser = argparse.ArgumentParser(prog="tool")
    sub = parser.add_subparsers(dest="command")
    nested = sub.add_parser("a").add_subparsers().add_parser("deep")
    sub.add_parser("b")
    add_version(parser)
    for argv, prog in ([], "tool"), (["a"], "tool a"), (["b"], "tool b"), (["a", "deep"], "tool a deep"):
        with pytest.raises(SystemExit) as exit:
            parser.parse_args([*argv, "--version"])
        assert exit.value.code == 0
        out = capsys.readouterr().out
        assert out.startswith(f"{prog} (clevr-clotho-qa ") and f"datasets {datasets.__version__}" in out
    assert nested.prog == "tool a deep"
