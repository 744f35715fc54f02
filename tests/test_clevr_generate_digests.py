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
alter questions updates them, and says so. ``benchmarks/compare_generate.py`` makes the same comparison against another checkout,
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
    ("clevr", "default"): (160, "93439c6a3aa0eabc95760bbac028bb7ecc149723102b219efc5c420f04486538"),
    ("clevr", "bounded"): (160, "ad7d7225ea5a2c0d0de0788b01a8574a9f84e357afc7a590b2b7dac747b8cccb"),
    ("clevr", "instances"): (92, "a6a186b6c98a5ab6288e99867e4f396d13612646ecd06d5ad6bae6dee659b035"),
    ("clevr", "budget"): (320, "80a9c318afdc938db572368ed950ffd726b35badac3aa47120cdf71b33fb1270"),
    ("clevr_math", "default"): (160, "b2af9ca503a312493b59e71daba38e12dac4ef928c6a62cfcc0cc2c5633deed5"),
    ("clevr_math", "bounded"): (160, "b4c645e724623cd9be5f5131e073e9d74664c85ed5078c25082abf3840b8aa41"),
    ("clevr_math", "instances"): (93, "cd26c1b788d506c72a6a59d2bb11b6f90a503095ff98758eb990586ab6a970ec"),
    ("clevr_math", "budget"): (199, "c29f775347fa7a883e6bd9d6940ce35ec4c7f449d823bd19e63150a6237d7d92"),
    ("clevr_math_chains", "default"): (146, "8eafefaa28533511da3d3a42eaf5a7d454eb4e8e9239b2bbc46aea18542772a5"),
    ("clevr_math_chains", "bounded"): (69, "51b6606120a42a4a9a8b4c2b1923f7c1610d32df676019ac649835e67bd83436"),
    ("clevr_math_chains", "instances"): (96, "79773f56fa47910a21a6a8eb8e55cc2a40c1d6e955cb9697794e1d688e279c87"),
    ("clevr_math_chains", "budget"): (191, "72ef41e6dcd00debbb0ae8a8c89413d96ed86ec1fce9bf890f90f9f3385a1daf"),
    ("clevr_math_long_chains", "default"): (160, "151fa4962cba5e8f380a5865043cf1b85684a6d6d63ee8f6564374e0f8493789"),
    ("clevr_math_long_chains", "bounded"): (96, "b348f2ac410b0581c23fd3c843ade1754a88ee6208ca676f0244a8c1c6318ead"),
    ("clevr_math_long_chains", "instances"): (96, "293695d069eebf00ac3bbe1fcaa1474bd3fe1094c60c2f04ac8b1d5e98de542d"),
    ("clevr_math_long_chains", "budget"): (299, "667fd9a82a8e906ffd2c95c45bfd11bf560b98bc4b7c558e25a28dc440f3c126"),
}


@pytest.fixture(scope="module")
def scenes():
    return generate_scenes(16, seed=5, split="val")


@pytest.mark.parametrize("templates, flags", sorted(DIGESTS))
def test_questions_are_byte_identical_to_the_pinned_digest(scenes, templates, flags):
    questions = list(QuestionGenerator(GeneratorOptions(templates=templates, **FLAGS[flags])).generate(scenes))
    digest = hashlib.sha256(json.dumps(questions).encode()).hexdigest()
    assert (len(questions), digest) == DIGESTS[(templates, flags)]
