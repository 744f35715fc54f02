"""Issue 29, causes 1 and 4: every path a command declares is attacked, by identity.

:data:`COMMANDS` names, per command, the classes that declare its paths (``option(...,
role=...)``) and how to run it with a value per declared flag. The table must name every
declared path (:func:`test_the_table_covers_every_declared_path`), so a path added to a
declaration is attacked without anyone remembering to: each declared output (and cache) is
pointed at each declared input, at a place inside it, at it through a symlinked parent, through
a bind mount (as root), and at the package's own files (the default inputs); every attack must
be refused before any work, the inputs unchanged.
"""

from __future__ import annotations

import dataclasses
import os
import re
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from safety_harness import Case, run_case
from test_safety_causes_1_4 import unmount_under

import builder_utils
from builder_utils.clevr.generate_questions import QuestionFiles
from builder_utils.clevr.options import GeneratorOptions
from builder_utils.clevr.synth.controls import WorldOptions
from builder_utils.clevr.synth.folder import ImageOptions, WorldPaths
from builder_utils.clevr.synth.render_file import DrawOptions, RenderPaths
from builder_utils.evaluation.cli import EvaluatePaths
from builder_utils.hub.export import ExportPaths
from builder_utils.options import declared_paths, path_values
from clevr_math.config import ClevrMathConfig
from clevr_math.counting_sets import CountingOptions
from clevr_math.demo import DemoPaths as ClevrDemoPaths
from clotho_aqa.cli import SplitsPaths, SynthPaths
from clotho_aqa.demo import DemoPaths as ClothoDemoPaths

PACKAGE = Path(builder_utils.__file__).resolve().parent
INPUT_ROLES, OUTPUT_ROLES = ("input", "input_dir"), ("output", "output_dir", "cache")
REFUSED = re.compile(r"same file as|lies inside|contains|is a folder|is a directory|is not a folder|not a folder")


@dataclasses.dataclass(frozen=True)
class Command:
    """A command, the classes declaring its paths, and its command line: ``base`` (flags that
    are not paths) and, per declared flag, a value (relative to the test folder; inputs are made
    under ``in/``: a name with a suffix is a file, one without a folder)."""

    name: str
    declarations: tuple[type, ...]
    base: tuple[str, ...]
    paths: dict[str, str]
    extra_inputs: dict[str, str] = dataclasses.field(default_factory=dict)  # a command's own extra input options

    def argv(self, values: dict[str, str]) -> list[str]:
        return [*self.base, *(word for flag, value in values.items() if value is not None for word in (flag, value))]


_EVAL = {"--data": "in/data", "--predictions": "in/p.jsonl", "--out": "V", "--cache_dir": "cache"}
_EXPORT = {"--data_dir": "in/data", "--out": "E", "--cache_dir": "cache"}
# the builder options that are paths (issue 37, cause 5): inputs of every command that builds
_CLEVR_MATH_CONFIG = {"--template_set": "in/tpl", "--released_questions_dir": "in/released",
                      "--test_data_dir": "in/test_data"}
COMMANDS = [
    Command("generate-questions", (QuestionFiles, GeneratorOptions), ("generate-questions", "--quiet"),
            {"--input_scene_file": "in/s.json", "--output_questions_file": "q.json", "--template_dir": "in/tpl",
             "--metadata_file": "in/meta.json", "--synonyms_json": "in/syn.json"}),
    Command("clotho-aqa splits", (SplitsPaths,), ("clotho-aqa", "splits", "--quiet"),
            {"--data_dir": "in/data", "--out": "S/splits.csv", "--report": "S/report.json"}),
    Command("clotho-aqa export", (ExportPaths,), ("clotho-aqa", "export", "--quiet"), _EXPORT),
    Command("clevr-math export", (ExportPaths, ClevrMathConfig), ("clevr-math", "export", "--quiet"),
            {**_EXPORT, **_CLEVR_MATH_CONFIG}),
    Command("clotho-aqa evaluate", (EvaluatePaths,), ("clotho-aqa", "evaluate", "--quiet"), _EVAL),
    Command("clevr-math evaluate", (EvaluatePaths, ClevrMathConfig), ("clevr-math", "evaluate", "--quiet"),
            {**_EVAL, **_CLEVR_MATH_CONFIG, "--scenes": "in/scenes.json"}, extra_inputs={"--scenes": "in/scenes.json"}),
    Command("clevr-math synth", (WorldPaths, ImageOptions, WorldOptions),
            ("clevr-math", "synth", "--num_scenes", "1", "--splits", "val", "--quiet"),
            {"--out": "W", "--blender": "in/blender.bin", "--base_scene_blendfile": "in/base_scene.blend",
             "--shape_dir": "in/shapes", "--material_dir": "in/materials",
             "--shape_color_combos_json": "in/combos.json", "--properties_json": "in/properties.json"}),
    Command("clevr-math counting-sets", (CountingOptions,), ("clevr-math", "counting-sets", "--sizes", "1,1,1", "--quiet"),
            {"--out": "C"}),
    Command("clotho-aqa synth", (SynthPaths,), ("clotho-aqa", "synth", "--num_files", "3"), {"--out": "R"}),
    Command("clevr-math render", (RenderPaths, DrawOptions), ("clevr-math", "render", "--quiet"),
            {"--scenes": "in/scenes.json", "--out": "W", "--blender": "in/blender.bin",
             "--base_scene_blendfile": "in/base_scene.blend", "--shape_dir": "in/shapes", "--material_dir": "in/materials"}),
    Command("clotho-aqa demo", (ClothoDemoPaths,), ("clotho-aqa", "demo", "--quiet"), {"--out": "D"}),
    Command("clevr-math demo", (ClevrDemoPaths, ClevrMathConfig), ("clevr-math", "demo", "--quiet"),
            {"--out": "D", **_CLEVR_MATH_CONFIG}),
]


def _roles(command: Command) -> dict[str, str]:
    """flag -> role of every path the command declares (and its extra input options)."""
    roles = {f"--{name}": role for cls in command.declarations for name, role in declared_paths(cls)}
    return {**roles, **dict.fromkeys(command.extra_inputs, "input")}


def _make_inputs(tmp: Path, command: Command) -> None:
    for flag, role in _roles(command).items():
        if role in INPUT_ROLES:
            path = tmp / command.paths[flag]
            if Path(path).suffix:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(f"the user's {path.name}\n")
            else:
                (path / "sub").mkdir(parents=True, exist_ok=True)
                (path / "sub" / "file.json").write_text("the user's file\n")


def test_the_table_covers_every_declared_path():
    for command in COMMANDS:
        assert set(_roles(command)) == set(command.paths), command.name
        assert any(role in OUTPUT_ROLES for role in _roles(command).values()), command.name


# Commands left out, and why: push writes nothing locally (it reads a folder export wrote and
# uploads).
NOT_IN_THE_TABLE = {"clevr-math push", "clotho-aqa push"}


def test_every_command_is_in_the_table():
    from clevr_math.cli import SUBCOMMANDS as CLEVR_MATH
    from clotho_aqa.cli import SUBCOMMANDS as CLOTHO_AQA

    every = {f"{prog} {sub.name}" for prog, subs in (("clevr-math", CLEVR_MATH), ("clotho-aqa", CLOTHO_AQA))
             for sub in subs} | {"generate-questions"}
    assert every - NOT_IN_THE_TABLE == {command.name for command in COMMANDS}


def _attack(command: Command, output: str, how: str, target: str | None) -> Case:
    """``output`` (a declared output or cache flag) pointed at ``target`` (a declared input) ``how``."""

    def setup(tmp: Path) -> list[str]:
        _make_inputs(tmp, command)
        values = dict(command.paths)
        if how == "the package's own files":
            shipped = PACKAGE / "clevr" / ("synonyms.json" if Path(command.paths[output]).suffix else "templates")
            values[output] = str(shipped)
        else:
            given = tmp / command.paths[target]
            if how == "equal":
                values[output] = str(given)
            elif how == "inside":
                values[output] = str(given / "sub" / Path(command.paths[output]).name)
            elif how == "through a symlinked parent":
                (tmp / "via").symlink_to(given.parent)
                values[output] = str(tmp / "via" / given.name)
            elif how == "through a bind mount":
                (tmp / "bind").mkdir()
                if os.geteuid() != 0 or subprocess.run(["mount", "--bind", str(given.parent), str(tmp / "bind")],
                                                       capture_output=True).returncode != 0:
                    pytest.skip("needs root and mount --bind")
                values[output] = str(tmp / "bind" / given.name)
        overwrite = ["--overwrite"] if command.name in ("generate-questions", "clotho-aqa splits",
                                                         "clotho-aqa evaluate", "clevr-math evaluate") else []
        return command.argv(values) + overwrite

    before = _package_digest()

    def check(tmp: Path, done) -> None:
        if how == "through a bind mount":
            subprocess.run(["umount", "-l", str(tmp / "bind")], capture_output=True)
        assert REFUSED.search(done.stderr), done.stderr
        assert _package_digest() == before, "the package's own files changed"

    has_inputs = any(role in INPUT_ROLES for role in _roles(command).values())
    return Case(f"{command.name}: {output} {how} {target or ''}".strip(), setup, exit_code=2,
                protected=["in"] if has_inputs else [], check=check, timeout=120)


def _package_digest() -> str:
    import hashlib

    digest = hashlib.sha256()
    for path in sorted((PACKAGE / "clevr").rglob("*.json")):
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _cases() -> list[Case]:
    cases = []
    for command in COMMANDS:
        roles = _roles(command)
        outputs = [flag for flag, role in roles.items() if role in OUTPUT_ROLES]
        inputs = [flag for flag, role in roles.items() if role in INPUT_ROLES]
        for output in outputs:
            for target in inputs:
                # a builder option's path takes the same identity check as the others: equal and
                # inside suffice (the symlinked parent is the other inputs' row; the suite's time)
                hows = ["equal"] if target in _CLEVR_MATH_CONFIG else ["equal", "through a symlinked parent"]
                if not Path(command.paths[target]).suffix:
                    hows.append("inside")
                cases += [_attack(command, output, how, target) for how in hows]
            cases.append(_attack(command, output, "through a bind mount", inputs[0]) if inputs else
                         _attack(command, output, "the package's own files", None))
            if inputs:
                cases.append(_attack(command, output, "the package's own files", None))
    return cases


@pytest.mark.parametrize("case", _cases(), ids=lambda c: c.name)
def test_every_declared_output_is_refused_over_every_declared_input(case: Case, tmp_path: Path) -> None:
    try:
        run_case(case, tmp_path)
    finally:
        unmount_under(tmp_path)


def test_the_default_inputs_are_declared_too():
    """Defaults count: the shipped metadata, synonyms and template folder of generate-questions."""
    values = {flag: Path(path) for paths in path_values(GeneratorOptions()).values() for flag, path in paths.items()}
    assert values == {"--template_dir": PACKAGE / "clevr" / "templates" / "clevr",
                      "--metadata_file": PACKAGE / "clevr" / "metadata.json",
                      "--synonyms_json": PACKAGE / "clevr" / "synonyms.json"}
