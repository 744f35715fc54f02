"""The generator's output pinned byte for byte: a digest of every question (text, program,
answer, chain of thought, order) for each shipped template set under flags that reach
different code paths (answer bounds and post prompts, several instances per template with
small balancing windows, a small search budget with many templates per image).

All were pinned again (issue 28) when the synthetic scenes they are asked about changed, not
the generator: scenes are now 480x320 (``pixel_coords`` in CLEVR v1.0's frame), and a scene
where an object shows fewer than CLEVR's 200 pixels is placed again, so some of the 16 differ.

The ``clevr`` digests were computed with the generator as it was before its speed-up (issue
24), so they also prove that the faster search, texts and chains of thought consume the
random stream exactly as before. The CLEVR-Math sets' were pinned again once, when a filter's
``OUT_RANGE`` became part of its options (``Step.sizes``): the search no longer draws empty
keys and too small selections that the range refused one by one, which changes the random
stream, not what can be asked (tests/test_clevr_search_replay.py). A change that is meant to
alter questions updates them, and says so. ``benchmarks/compare_outputs.py --scenes`` makes the same comparison against another
checkout, on real scene files, through the command line.

Pinned again (issue 35), again for the scenes alone: the synthetic camera is now CLEVR's own
(7.481, -6.508, 5.344, read from its base_scene.blend) instead of (7.3589, -6.9258, 4.9583), which
moves ``directions``, relations, ``pixel_coords`` and which placements pass the visibility floor.
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
    ("clevr", "default"): (160, "81fe8f44c07ea8cf164815e78b8b7915511a5b048735389b5c4a2135536f86d2"),
    ("clevr", "bounded"): (160, "419042b3c1d3acef3a2d2c90ed400c8cdb4e6c54d63670d9954edb3d05ce50b6"),
    ("clevr", "instances"): (92, "4fababfa42cb99f40def6173def047d9b320df6f498780989d055f51e9ed0eba"),
    ("clevr", "budget"): (320, "44e3e27efd8cd1d7f101a2f38aa480f760bd30dc5959295a4ce17f55e5ed16ce"),
    ("clevr_math", "default"): (160, "83818189dd2162792ec79f4356e17531f9e7147b590ee44575ec9089a4e1f279"),
    ("clevr_math", "bounded"): (160, "5ebab726a2135a9e1c9afbd25ee2418a895d74dc984b17f85df9c190343ae98c"),
    ("clevr_math", "instances"): (93, "ab3bab3a08d13ce272bdca161a3ebc4f6e61db102944873ee6dd7840ccdd1ea6"),
    ("clevr_math", "budget"): (202, "24f1b3cffabe37f778f2cef9d1e4085e087fe0b445c61f6ff5348225e96c1dca"),
    ("clevr_math_chains", "default"): (146, "bff7d61a51d6be9cc4a915a7dd99441de15ccfa587aafc101e150cf73431c6d3"),
    ("clevr_math_chains", "bounded"): (69, "bb68b07a133d885d5fedc6275c3f7333ddfa9777038c9989bb72280f318e2e3c"),
    ("clevr_math_chains", "instances"): (96, "460b8905eed10addf114a7ba49a286e98ccebe61ddf472f3dc4e64ff2dd4f6a9"),
    ("clevr_math_chains", "budget"): (192, "ea273cce37aee4a407d8d0ff420ecc683bc0f2a870023900ab4b53df0876ad93"),
    ("clevr_math_long_chains", "default"): (160, "5c5399cb5a26ed6528cdbef9c38652149450d3eef32f0c93f7d7d4d5fc5e237b"),
    ("clevr_math_long_chains", "bounded"): (96, "6ca27fa05ce4cebc55cc679b6704c938505fdcec1b778cb5c3508d09d34c20fc"),
    ("clevr_math_long_chains", "instances"): (96, "8911c6b5a1dba78224238cdc0bd22e210eb12a6326222e22b3e7bba5993130bd"),
    ("clevr_math_long_chains", "budget"): (299, "d3e81196cb180b2b6b3541b31dbd4ed2b303193a9e868cfa3c54d0bc42fe0882"),
}


@pytest.fixture(scope="module")
def scenes():
    return generate_scenes(16, seed=5, split="val")


@pytest.mark.parametrize("templates, flags", sorted(DIGESTS))
def test_questions_are_byte_identical_to_the_pinned_digest(scenes, templates, flags):
    questions = list(QuestionGenerator(GeneratorOptions(templates=templates, **FLAGS[flags])).generate(scenes))
    digest = hashlib.sha256(json.dumps(questions).encode()).hexdigest()
    assert (len(questions), digest) == DIGESTS[(templates, flags)]
