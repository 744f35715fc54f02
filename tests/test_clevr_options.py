"""One declaration per generator option (builder_utils/options.py, builder_utils/clevr/options.py): the command line, the
library options and the CLEVR-Math config all come from it."""

from __future__ import annotations

import argparse
import dataclasses

import datasets
import pytest

from builder_utils.clevr.generate_questions import build_parser
from builder_utils.clevr.options import GeneratorOptions
from builder_utils.options import (
    Integer,
    add_option_flags,
    builder_fields,
    check_options,
    generator_settings,
    option,
    option_names,
    options_from_args,
)
from clevr_math.config import CONTENT_FIELDS, ClevrMathConfig, ConfigError


@dataclasses.dataclass
class WithNewOption(GeneratorOptions):
    """What adding an option takes: one field."""

    extra_knob: int = option(3, Integer(1), "a new knob (%(default)s)", builder=True)


def test_a_new_field_shows_up_as_flag_option_and_builder_config_field():
    parser = argparse.ArgumentParser(prog="gen")
    add_option_flags(parser, cls=WithNewOption)
    assert "--extra_knob" in parser.format_help()
    assert options_from_args(parser.parse_args(["--extra_knob", "5"]), WithNewOption).extra_knob == 5
    with pytest.raises(ValueError, match="extra_knob must be an integer >= 1, got 0"):
        options_from_args(parser.parse_args(["--extra_knob", "0"]), WithNewOption)

    @dataclasses.dataclass
    class Config(builder_fields("Fields", WithNewOption, max_answer=10), datasets.BuilderConfig):
        def __post_init__(self):
            super().__post_init__()
            check_options(self, where=f"config {self.name!r}", error=ConfigError)

    config = Config(name="x", extra_knob=7)
    assert (config.extra_knob, config.max_answer) == (7, 10)
    assert generator_settings(config, WithNewOption)["extra_knob"] == 7
    with pytest.raises(ConfigError, match="config 'x': extra_knob must be an integer >= 1, got 0"):
        Config(name="x", extra_knob=0)


def test_every_option_is_a_flag_of_the_command_with_its_default():
    parser = build_parser()
    flags = {a.dest: a for a in parser._actions}
    for f in dataclasses.fields(GeneratorOptions):
        assert f.name in flags, f.name
        assert flags[f.name].default == f.default, f.name
    args = parser.parse_args(["--input_scene_file", "s.json"])
    assert options_from_args(args, GeneratorOptions) == GeneratorOptions()


def test_every_builder_option_is_a_checked_content_field_of_the_config():
    fields = {f.name: f for f in dataclasses.fields(ClevrMathConfig)}
    config = ClevrMathConfig(name="x")
    for name in option_names(cls=GeneratorOptions, builder=True):
        assert name in fields and name in CONTENT_FIELDS and name in config.content(), name
    assert generator_settings(config, GeneratorOptions)["max_answer"] == 10  # the config's own default
    GeneratorOptions(**generator_settings(config, GeneratorOptions))  # every value the config accepts is a valid option
    for name, bad in (("templates_per_image", 0), ("seed", -1), ("add_post_prompt", "yes")):
        with pytest.raises(ConfigError, match=f"CLEVR-Math config 'x': {name} must be"):
            ClevrMathConfig(name="x", **{name: bad})
