"""One declaration per dataset (``ENTRY`` in its ``cli.py``): what its command, demo and lmms-eval tasks share.

The dataset's modules keep only what differs (``synth``, ``clotho-aqa splits``, each demo's data).
Its own package because it sits above ``builder_utils.hub`` and ``.evaluation`` (no package cycle).

Example:
    >>> from clevr_math.cli import ENTRY
    >>> [sub.name for sub in ENTRY.subcommands], ENTRY.build_parser().parse_args(["demo", "--out", "d"]).num_scenes
    (['synth', 'demo', 'render', 'counting-sets', 'export', 'push', 'evaluate'], 30)
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from builder_utils.command import EXPORT_HELP, PUSH_HELP, Subcommand, run_command, subcommands_parser

__all__ = ["DatasetEntry"]


def _imported(name: str):
    """``module:attribute``, imported on use (``--help`` never imports a builder)."""
    module, _, attribute = name.partition(":")
    return getattr(importlib.import_module(module), attribute)


@dataclass(frozen=True)
class DatasetEntry:
    """A dataset's declaration. ``builder``, ``config`` and ``export_source``: ``module:name``;
    ``<package>.demo`` holds ``DemoPaths``, ``add_demo_options(parser)`` and
    ``run_from_args(args, builder_kwargs, stream)``, ``<package>.evaluation`` ``add_arguments``;
    ``extra``: the dataset's own subcommands, listed after ``demo``."""

    prog: str
    package: str
    description: str
    builder: str
    config: str
    card_template: str
    synth: Subcommand
    demo_help: str
    demo_description: str
    evaluate_help: str
    evaluate_description: str
    lmms_tag: str
    export_data_dir_help: str
    extra: tuple[Subcommand, ...] = ()
    export_source: str | None = None

    @property
    def subcommands(self) -> list[Subcommand]:
        return [self.synth, Subcommand("demo", self.demo_help, self._add_demo), *self.extra,
                Subcommand("export", EXPORT_HELP, self._add_export), Subcommand("push", PUSH_HELP, self._add_push),
                Subcommand("evaluate", self.evaluate_help, self._add_evaluate)]

    def build_parser(self, argv=None):
        """The command's parser (with ``argv``: only the subcommand it runs built in full)."""
        return subcommands_parser(self.prog, self.description, self.subcommands, argv)

    def main(self, argv=None) -> int:
        """The command's entry point; returns the exit status (2 with one line on stderr for bad input)."""
        argv = list(sys.argv[1:] if argv is None else argv)
        return run_command(self.build_parser(argv), argv, package=self.package)

    def _add_demo(self, subparsers) -> None:
        from builder_utils.options import add_builder_flags, add_option_flags, builder_kwargs_from_args

        demo, config = importlib.import_module(f"{self.package}.demo"), _imported(self.config)
        parser = subparsers.add_parser("demo", description=self.demo_description)
        add_option_flags(parser, {"inputs and outputs": parser}, cls=demo.DemoPaths)
        demo.add_demo_options(parser)
        parser.add_argument("--quiet", action="store_true", help="no transcript, no progress, no success line")
        add_builder_flags(parser, config)  # the builder's options too (the demo's own --seed wins)

        def run(args) -> int:
            kwargs = builder_kwargs_from_args(args, config)
            with open(os.devnull, "w", encoding="utf-8") if args.quiet else contextlib.nullcontext() as stream:
                demo.run_from_args(args, kwargs, stream)
            return 0

        parser.set_defaults(run=run, parser=parser)

    def _add_export(self, subparsers) -> None:
        from builder_utils.hub.cli import add_export_subcommand

        builder = _imported(self.builder)
        source = _imported(self.export_source)() if self.export_source else None
        add_export_subcommand(subparsers, builder, self.card_template, prog=f"{self.prog} export", source=source,
                              data_dir_help=self.export_data_dir_help)

    def _add_push(self, subparsers) -> None:
        from builder_utils.hub.cli import add_push_subcommand

        add_push_subcommand(subparsers, prog=f"{self.prog} push")

    def _add_evaluate(self, subparsers) -> None:
        add = _imported(f"{self.package}.evaluation:add_arguments")
        add(subparsers.add_parser("evaluate", description=self.evaluate_description))

    @contextlib.contextmanager
    def demo_folder(self, out, folders, builder_kwargs=None):
        """The demo's output folder, open, with its ``folders`` claimed (refused before any work);
        the paths among the builder options ``builder_kwargs`` are its inputs."""
        from builder_utils.options import given_path_values
        from builder_utils.ownership import OutputFolder

        declared = given_path_values(_imported(self.config), builder_kwargs)
        with OutputFolder.open(out, command=f"{self.prog} demo", declared=declared) as folder:
            yield folder, [folder.claim(name) for name in folders]

    def export_demo(self, hub, data_dir, cache_dir, builder_kwargs, configs=None, num_proc=None) -> None:
        """Export ``configs`` (default: all) of the demo's data to ``hub``, without progress bars and without
        the inline export's size advice: the demo chose inline, its user cannot act on it there."""
        from builder_utils.hub import export_builder
        from builder_utils.hub.export import SIZE_ADVICE

        level = SIZE_ADVICE.level
        SIZE_ADVICE.setLevel(logging.ERROR)
        try:
            export_builder(_imported(self.builder), hub, card_template=self.card_template, data_dir=data_dir,
                           configs=configs, num_proc=num_proc, cache_dir=cache_dir, progress=False,
                           builder_kwargs=builder_kwargs)
        finally:
            SIZE_ADVICE.setLevel(level)

    @property
    def task_dir(self) -> Path:
        """The shipped lmms-eval task folder, ``<package>/lmms_eval``."""
        return Path(importlib.import_module(self.package).__file__).resolve().parent / "lmms_eval"

    def write_tasks(self, out_dir: str | os.PathLike, dataset_path: str | os.PathLike) -> Path:
        """Copy the lmms-eval tasks to ``out_dir``, reading ``dataset_path`` (a folder, written absolute, or a repo id).

        Example::

            write_tasks("tasks/clevr_math", "my-name/clevr-math")   # -> PosixPath('tasks/clevr_math')
        """
        from builder_utils.evaluation.lmms import write_task_folder

        return write_task_folder(self.task_dir, out_dir, dataset_path)
