"""The generator's output pinned byte for byte: a digest of every question (text, program,
answer, chain of thought, order) for each shipped template set under flags that reach
different code paths (answer bounds and post prompts, several instances per template with
small balancing windows, a small search budget with many templates per image).

The digests were computed with the generator as it was before its speed-up (issue 24), so
they also prove that the faster search, texts and chains of thought consume the random
stream exactly as before. A change that is meant to alter questions updates them, and says
so. ``benchmarks/compare_generate.py`` makes the same comparison against another checkout,
on real scene files, through the command line.
"""

from __future__ import annotations

import hashlib
import json

import pytest

from builder_utils.clevr.generate import GeneratorOptions, QuestionGenerator
from builder_utils.clevr.synth import generate_scenes

FLAGS = {
    "default": {},
    "bounded": {"seed": 3, "max_answer": 5, "bound_intermediate_counts": True, "add_post_prompt": True},
    "instances": {"seed": 1, "instances_per_template": 2, "templates_per_image": 3, "reset_counts_every": 8},
    "budget": {"seed": 7, "search_budget": 150, "templates_per_image": 20},
}

# (template set, flags) -> (number of questions, sha256 of json.dumps of the question list)
DIGESTS = {
    ("clevr", "default"): (160, "09f6a545f85a2d8abd21cbc8ab7b023426ec9c38fbcec7ece86b273f4eca6e26"),
    ("clevr", "bounded"): (160, "2353b2c9c8c182bbb1f48ebdb81ff644c87b342239b51f1b0a5a1c5762881f71"),
    ("clevr", "instances"): (92, "a405bd695e2121f750e618b373444fe098bac8eaf9b4d68f24ba93272ba46a26"),
    ("clevr", "budget"): (320, "902eec67518567459c43dca48d054b885ab3be023b5dcf92437374808aac4851"),
    ("clevr_math", "default"): (160, "c9ef067c9f2e9676745c789076d5e3e029474edce21df4965f5fc7b40489f4d6"),
    ("clevr_math", "bounded"): (160, "bd5721b80e1e1e36fdbe5f64f14317fa04227d95fcc624f394521b87d1a4b64d"),
    ("clevr_math", "instances"): (93, "254763201fe021bdf21a00dd9cbf4b5c2618cec756ebcb933694b13159129c61"),
    ("clevr_math", "budget"): (199, "43dd2016d67bf30d12b78d7e221eb7af2b0f92d874cf5db8d3042216ea9c7088"),
    ("clevr_math_chains", "default"): (146, "fa1cdcd8506fb502945eb2dbaf2cb4d7a9b11abde6100088e6d05adcaed1260e"),
    ("clevr_math_chains", "bounded"): (68, "33c989d5cc7adf0862c70d34f3b66b23fb85304e12044d1decf92c7b32dddb1b"),
    ("clevr_math_chains", "instances"): (96, "25d236453bff5dedf3ba9246abdba89d6f68fe9711a28ca2d7593f85e0b922d1"),
    ("clevr_math_chains", "budget"): (174, "775ce77a7bce4c21ecf390b98a43944110b5715c407e5c84cda57a3c122b749c"),
    ("clevr_math_long_chains", "default"): (160, "1d58e8ca8bc5f7faf89705542b00c0923a5d65bcd4ff5e0812afece47392b643"),
    ("clevr_math_long_chains", "bounded"): (97, "4f7bb99e28aa58e71f37b094edf59e886df4a6cbedca121eac330a4603013cdd"),
    ("clevr_math_long_chains", "instances"): (96, "e03848656da94ceebabca698dccbf9cf711d12edee940ef0428f6ad47ed13e25"),
    ("clevr_math_long_chains", "budget"): (299, "2e7df404db5b7fda199b395f4fb6a970b12e6074fcf2ed21b18e3ee6cf035682"),
}


@pytest.fixture(scope="module")
def scenes():
    return generate_scenes(16, seed=5, split="val")


@pytest.mark.parametrize("templates, flags", sorted(DIGESTS))
def test_questions_are_byte_identical_to_the_pinned_digest(scenes, templates, flags):
    questions = list(QuestionGenerator(GeneratorOptions(templates=templates, **FLAGS[flags])).generate(scenes))
    digest = hashlib.sha256(json.dumps(questions).encode()).hexdigest()
    assert (len(questions), digest) == DIGESTS[(templates, flags)]
