"""The generator's output pinned byte for byte: a digest of every question (text, program,
answer, chain of thought, order) for each shipped template set under flags that reach
different code paths (answer bounds and post prompts, several instances per template with
small balancing windows, a small search budget with many templates per image).

The ``clevr`` digests were computed with the generator as it was before its speed-up (issue
24), so they also prove that the faster search, texts and chains of thought consume the
random stream exactly as before. The CLEVR-Math sets' were pinned again once, when a filter's
``OUT_RANGE`` became part of its options (``Step.sizes``): the search no longer draws empty
keys and too small selections that the range refused one by one, which changes the random
stream, not what can be asked (tests/test_clevr_search_replay.py). A change that is meant to
alter questions updates them, and says so. ``benchmarks/compare_outputs.py --scenes`` makes the same comparison against another
checkout, on real scene files, through the command line.
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
    ("clevr_math", "default"): (160, "5cada1de0348f7ca267f2594809557f804ccfbb71d6c1237e80a5513c85bc8b3"),
    ("clevr_math", "bounded"): (160, "60da04fe0fa2867a24dd8db193a1a08a3735fecea696bc3b09a4e554147cd84a"),
    ("clevr_math", "instances"): (93, "6ba91c4d67484164753feb6f6e3697a38e932eb56510703b5f5222f465e6e4c1"),
    ("clevr_math", "budget"): (200, "c82468ef33234ef3196428266f35ab23a20a0b1e9375c194538a26ce84f17821"),
    ("clevr_math_chains", "default"): (146, "c9686ee78fe494446f600c2fef5336b53fdb6ea6355babce3129facde4ebd0da"),
    ("clevr_math_chains", "bounded"): (69, "f76a51b09726fcff5b9864e4519a8ba29ba62d2c2be59db188b2a671f2ec3422"),
    ("clevr_math_chains", "instances"): (96, "a48bfac9cf716f38b445caf2c14106888d30a242b41abc66005206ee50f0f0bf"),
    ("clevr_math_chains", "budget"): (194, "a70089118ad428a6e7924f48de65c71e821b90b0e89e774e27c5239dad6c6eca"),
    ("clevr_math_long_chains", "default"): (160, "b08c1fc6e2e4fec1d5cda0f8143a8e684db651732fdc1c6f9265a6c16f55e699"),
    ("clevr_math_long_chains", "bounded"): (96, "d6503c3477a1696ede1fa369ba482e9a870deb0f7a0b2d327ad5ba7a96b02c41"),
    ("clevr_math_long_chains", "instances"): (96, "d00057b274d0ad60da50e06914f83933f5f458a64a5191f99c2f045d3bb0f21c"),
    ("clevr_math_long_chains", "budget"): (299, "10bb5615b5d8854d277ca23c724edb7714ca1a29633df346ebbdad5ef7e7cc02"),
}


@pytest.fixture(scope="module")
def scenes():
    return generate_scenes(16, seed=5, split="val")


@pytest.mark.parametrize("templates, flags", sorted(DIGESTS))
def test_questions_are_byte_identical_to_the_pinned_digest(scenes, templates, flags):
    questions = list(QuestionGenerator(GeneratorOptions(templates=templates, **FLAGS[flags])).generate(scenes))
    digest = hashlib.sha256(json.dumps(questions).encode()).hexdigest()
    assert (len(questions), digest) == DIGESTS[(templates, flags)]
