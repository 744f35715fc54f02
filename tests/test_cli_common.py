"""What every command does the same way: --version, help for every subcommand and flag,
progress bars only for a terminal, status lines through logging, demos that restore the
caller's progress-bar settings."""

from __future__ import annotations

import argparse
import fcntl
import importlib.metadata
import logging
import os
import pty
import re
import struct
import subprocess
import sys
import termios
from pathlib import Path

import datasets.utils
import pytest

from builder_utils.clevr import generate_questions
from builder_utils.clevr.synth import folder as synth
from builder_utils.clevr.synth import render_file
from clevr_math import cli as clevr_cli
from clevr_math import counting_sets
from clotho_aqa import cli as clotho_cli

VERSION = importlib.metadata.version("clevr-clotho-qa")
MAINS = {"clevr-math": clevr_cli.main, "clotho-aqa": clotho_cli.main, "generate-questions": generate_questions.main}
SUBCOMMANDS = {
    "clevr-math": ["synth", "demo", "render", "counting-sets", "export", "push", "evaluate"],
    "clotho-aqa": ["synth", "demo", "splits", "export", "push", "evaluate"],
    "generate-questions": [],
}
BIN = Path(sys.executable).parent


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    return {name: sub for action in parser._actions if isinstance(action, argparse._SubParsersAction)
            for name, sub in action.choices.items()}


def test_the_subcommand_table_is_complete():
    assert list(_subcommands(clevr_cli.build_parser())) == SUBCOMMANDS["clevr-math"]
    assert list(_subcommands(clotho_cli.build_parser())) == SUBCOMMANDS["clotho-aqa"]


@pytest.mark.parametrize("argv", [[name, *sub] for name, subs in SUBCOMMANDS.items() for sub in [[], *[[s] for s in subs]]],
                         ids=" ".join)
def test_version_on_every_command_and_subcommand(argv, capsys):
    name, *sub = argv
    with pytest.raises(SystemExit) as exit:
        MAINS[name]([*sub, "--version"])
    assert exit.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(" ".join(argv) + f" (clevr-clotho-qa {VERSION}; datasets ")


def test_version_of_the_installed_console_scripts():
    for name in MAINS:
        done = subprocess.run([str(BIN / name), "--version"], capture_output=True, text=True, check=False)
        assert done.returncode == 0 and done.stdout.startswith(f"{name} (clevr-clotho-qa {VERSION};"), done


def _parsers() -> dict[str, argparse.ArgumentParser]:
    """Every parser a user meets: the commands, their subcommands, and the parsers that
    forwarding subcommands hand their arguments to."""
    parsers = {"generate-questions": generate_questions.build_parser()}
    for name, build in (("clevr-math", clevr_cli.build_parser), ("clotho-aqa", clotho_cli.build_parser)):
        parser = build()
        parsers[name] = parser
        for sub_name, sub in _subcommands(parser).items():
            parsers[f"{name} {sub_name}"] = sub
    parsers["clevr-math synth"] = synth.build_parser("clevr-math synth")  # forwarded: its own parser
    parsers["clevr-math render"] = render_file.build_parser("clevr-math render")
    parsers["clevr-math counting-sets"] = counting_sets.build_parser()
    return parsers


PARSERS = _parsers()
# Sphinx/RST markup that is fine in a docstring but shows raw in --help.
MARKUP = re.compile(r"``|:(class|func|mod|data|meth|attr):`")


@pytest.mark.parametrize("name", sorted(PARSERS))
def test_every_subcommand_and_flag_has_a_description(name):
    parser = PARSERS[name]
    if " " in name:
        assert parser.description, f"{name}: no description"
    undocumented = [
        action.option_strings[-1] if action.option_strings else action.dest
        for action in parser._actions
        if not isinstance(action, argparse._SubParsersAction) and not action.help
    ]
    assert undocumented == [], f"{name}: flags without help"
    text = parser.format_help()
    assert not MARKUP.search(text), f"{name}: raw markup in --help"


# The commands that build a dataset, by the builder config whose fields they take as flags.
BUILDING = {"clevr-math": ("export", "demo", "evaluate"), "clotho-aqa": ("export", "demo", "evaluate")}
# A flag name a command gives to something else, with the reason.
TAKEN = {
    ("clevr-math export", "max_answer"): "the stream's --max_answer (clevr_math.streaming.StreamExport)",
    ("clevr-math demo", "seed"): "the seed of the demo's synthetic world",
    ("clotho-aqa demo", "seed"): "the seed of the demo's synthetic release",
    ("clevr-math evaluate", "seed"): "the seed of the bootstrap intervals",
    ("clotho-aqa evaluate", "seed"): "the seed of the bootstrap intervals",
}


def _config_fields(config_cls) -> list[str]:
    """The fields a builder config adds to ``datasets.BuilderConfig``'s own (name, data_dir ...)."""
    import dataclasses

    own = {f.name for f in dataclasses.fields(datasets.BuilderConfig)}
    return [f.name for f in dataclasses.fields(config_cls) if f.name not in own]


@pytest.mark.parametrize("command", sorted(BUILDING))
def test_every_builder_config_field_is_a_declared_option_with_a_flag_in_every_building_command(command):
    from builder_utils.options import option_names
    from clevr_math.config import ClevrMathConfig
    from clotho_aqa.config import ClothoAQAConfig

    config_cls = {"clevr-math": ClevrMathConfig, "clotho-aqa": ClothoAQAConfig}[command]
    fields = _config_fields(config_cls)
    assert fields and set(fields) == set(option_names(cls=config_cls, builder=True))  # each declared (checked, cached)
    for sub in BUILDING[command]:
        parser = PARSERS[f"{command} {sub}"]
        flagged = parser.get_default("builder_flags")
        missing = [name for name in fields if name not in flagged and (f"{command} {sub}", name) not in TAKEN]
        assert missing == [], f"{command} {sub}: no flag for {missing}"
        assert all(f"--{name}" in parser.format_help() for name in fields)


def test_every_subcommand_is_listed_with_a_summary():
    for name in ("clevr-math", "clotho-aqa"):
        listing = [a for a in PARSERS[name]._actions if isinstance(a, argparse._SubParsersAction)][0]
        assert {choice.dest: bool(choice.help) for choice in listing._choices_actions} == {
            sub: True for sub in SUBCOMMANDS[name]
        }


def test_demo_help_names_the_configurations_it_builds():
    text = " ".join(PARSERS["clevr-math"].format_help().split())
    assert "both configs" not in text
    assert "general and multihop" in text
    for name in ("clevr-math demo", "clotho-aqa demo"):  # the folders each demo writes, evaluation/ included
        out_help = " ".join(PARSERS[name]._option_string_actions["--out"].help.split())
        assert "hub" in out_help and "evaluation" in out_help and "cache" not in out_help, out_help


def test_max_shard_size_help_says_what_it_limits():
    for name in ("clevr-math export", "clotho-aqa export"):
        action = PARSERS[name]._option_string_actions["--max_shard_size"]
        assert "before embedding" not in action.help and "embedded" in action.help


def test_export_help_says_when_data_dir_is_needed_and_every_valid_config(capsys):
    # issue 40: --data_dir shown optional, the README promising a download, the command refusing.
    clevr = PARSERS["clevr-math export"]._option_string_actions
    clotho = PARSERS["clotho-aqa export"]._option_string_actions
    assert "CLEVR_v1.0 folder" in clevr["--data_dir"].help and "except with --stream_questions" in clevr["--data_dir"].help
    assert "release folder" in clotho["--data_dir"].help and "CLEVR" not in clotho["--data_dir"].help
    assert clotho["--data_dir"].required and not clevr["--data_dir"].required
    for name, action in (("clevr-math", clevr["--config"]), ("clotho-aqa", clotho["--config"])):
        help_text = " ".join(action.help.split())
        assert "conversations" in help_text and "prompts" in help_text, help_text
    assert "prompts_multihop" in clevr["--config"].help
    assert clevr_cli.main(["export", "--out", "unused"]) == 2
    error = capsys.readouterr().err
    assert error.startswith("clevr-math export: error: --data_dir: the CLEVR_v1.0 folder") and error.count("\n") == 1


# -- progress bars and log lines of a real console script --------------------------------


def _run(argv, tmp_path, terminal: bool, env=None):
    """Run a console script with stderr on a pseudo-terminal or a pipe; return (status, stderr)."""
    environment = {k: v for k, v in os.environ.items() if k != "HF_DATASETS_DISABLE_PROGRESS_BARS"}
    environment.update(env or {})
    if not terminal:
        done = subprocess.run([str(BIN / argv[0]), *argv[1:]], capture_output=True, text=True, env=environment,
                              cwd=tmp_path, timeout=300, check=False)
        return done.returncode, done.stderr
    leader, follower = pty.openpty()
    # a terminal 100 columns wide (a new pseudo-terminal has 0, and tqdm would draw nothing)
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    with subprocess.Popen([str(BIN / argv[0]), *argv[1:]], stdout=subprocess.DEVNULL, stderr=follower,
                          env=environment, cwd=tmp_path) as process:
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            chunks.append(chunk)
        status = process.wait(timeout=300)
    os.close(leader)
    return status, b"".join(chunks).decode("utf-8", "replace")


SYNTH = ["clevr-math", "synth", "--out", "world", "--num_scenes", "3", "--splits", "val", "--no_render"]
BAR = "synthetic CLEVR: 100%"


@pytest.mark.parametrize(
    "terminal, env, extra, bar",
    [
        (True, None, [], True),  # a person at a terminal sees the bar
        (False, None, [], False),  # a pipe or a log file does not
        (True, {"HF_DATASETS_DISABLE_PROGRESS_BARS": "1"}, [], False),
        (False, {"HF_DATASETS_DISABLE_PROGRESS_BARS": "0"}, [], True),
        (True, None, ["--quiet"], False),
    ],
    ids=["terminal", "pipe", "terminal-env-off", "pipe-env-on", "terminal-quiet"],
)
def test_progress_bar_policy_of_a_console_script(tmp_path, terminal, env, extra, bar):
    status, err = _run([*SYNTH, *extra], tmp_path, terminal, env)
    assert status == 0, err
    assert (BAR in err) is bar, err
    # The status line is a log record: shown unless --quiet, with the command's name.
    assert ("clevr-math synth: wrote synthetic CLEVR to" in err) is (not extra), err


def test_generate_questions_quiet_shows_no_bar_and_no_status_line(tmp_path):
    assert _run(SYNTH[:3] + ["world", "--num_scenes", "2", "--splits", "val", "--no_render", "--quiet"],
                tmp_path, terminal=False)[0] == 0
    scenes = str(tmp_path / "world" / "scenes" / "CLEVR_val_scenes.json")
    argv = ["generate-questions", "--input_scene_file", scenes, "--output_questions_file", "q.json", "--verbose"]
    status, loud = _run(argv, tmp_path, terminal=True)
    assert status == 0 and "generate-questions: 100%" in loud and "generate-questions: wrote" in loud, loud
    status, quiet = _run([*argv, "--quiet"], tmp_path, terminal=True)
    assert status == 0 and "100%" not in quiet and "generate-questions: wrote" not in quiet, quiet
    assert (tmp_path / "q.json").is_file()


@pytest.mark.parametrize("start_disabled", [False, True])
def test_run_demo_from_python_logs_its_status_and_restores_the_progress_bar_state(tmp_path, start_disabled,
                                                                                   capsys, caplog):
    from clotho_aqa.demo import run_demo

    (datasets.utils.disable_progress_bars if start_disabled else datasets.utils.enable_progress_bars)()
    try:
        with caplog.at_level(logging.INFO, logger="clotho_aqa"):
            run_demo(tmp_path / "demo", num_files=3)
        assert datasets.utils.are_progress_bars_disabled() is start_disabled
    finally:
        datasets.utils.enable_progress_bars()
    # Status lines are log records (a notebook silences or captures them); the rows it shows are output.
    messages = [record.getMessage() for record in caplog.records if record.name == "clotho_aqa.demo"]
    assert any(m.startswith("exported every config in the Hub layout") for m in messages), messages
    captured = capsys.readouterr()
    assert "[all]" in captured.out and "exported every config" not in captured.out + captured.err


def _flags(parser: argparse.ArgumentParser) -> set[str]:
    return {flag for action in parser._actions for flag in action.option_strings}


def _with_builder_flags(config_cls) -> argparse.ArgumentParser:
    from builder_utils.options import add_builder_flags

    parser = argparse.ArgumentParser()
    add_builder_flags(parser, config_cls)
    return parser


@pytest.mark.parametrize("cli", [clevr_cli, clotho_cli], ids=["clevr-math", "clotho-aqa"])
def test_the_shared_subcommands_come_from_the_declaration(cli):
    entry = cli.ENTRY
    assert (cli.build_parser, cli.main) == (entry.build_parser, entry.main)
    assert (cli.build_parser().prog, entry.package) == (entry.prog, cli.__name__.partition(".")[0])
    names = [sub.name for sub in cli.SUBCOMMANDS]
    assert names == ["synth", "demo", *(sub.name for sub in entry.extra), "export", "push", "evaluate"]
    for sub in cli.SUBCOMMANDS:
        if sub.name in ("demo", "export", "push", "evaluate"):
            assert sub.add.__self__ is entry, sub.name  # generated, not written again per dataset
    assert [sub.name for sub in cli.SUBCOMMANDS if getattr(sub.add, "__self__", None) is not entry] == \
        ["synth", *(sub.name for sub in entry.extra)]


def test_both_datasets_share_the_export_and_push_flags():
    from clevr_math.config import ClevrMathConfig
    from clevr_math.streaming import StreamExport
    from clotho_aqa.config import ClothoAQAConfig

    clevr, clotho = _subcommands(clevr_cli.build_parser()), _subcommands(clotho_cli.build_parser())
    assert _flags(clevr["push"]) == _flags(clotho["push"])
    stream = argparse.ArgumentParser(add_help=False)
    StreamExport().add_arguments(stream)
    # what differs is only each builder's options and CLEVR-Math's --stream_questions rows
    shared = _flags(clevr["export"]) - _flags(_with_builder_flags(ClevrMathConfig)) - _flags(stream)
    assert shared == _flags(clotho["export"]) - _flags(_with_builder_flags(ClothoAQAConfig))
    assert {"--out", "--data_dir", "--media"} <= shared
