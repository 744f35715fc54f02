"""Step worlds drawn by Blender (``make test-render``): each world of a problem with the first
image's studio (camera and lights), every object visible on Blender's own object-index pass."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from builder_utils.clevr.generate import GeneratorOptions, QuestionGenerator
from builder_utils.clevr.synth.blender import BlenderRenderer, BlenderSettings, find_blender, studio_camera, studio_for
from builder_utils.clevr.synth.insert import add_steps, draw_world
from builder_utils.clevr.synth.scenes import generate_scene
from builder_utils.clevr.synth.visibility import min_pixels_for


@pytest.fixture(scope="module")
def renderer():
    with BlenderRenderer(find_blender(), BlenderSettings()) as kept:
        yield kept


def test_every_world_of_a_chain_drawn_by_blender_with_the_first_studio(renderer, tmp_path):
    studio = studio_for(0, "val", 2)
    camera = studio_camera(studio, BlenderSettings())
    scene = generate_scene(0, "val", 2, camera)
    gen = QuestionGenerator(GeneratorOptions(templates="clevr_math_long_chains", seed=0, max_answer=20,
                                             bound_intermediate_counts=True, question_types=("chain_3",)),
                            on_question=functools.partial(add_steps, seed=0))
    question = gen.generate_scene(scene, 2)[0]
    worlds = [scene, *question["steps"]]
    images = [np.asarray(draw_world(world, camera, "blender", studio=studio, blender=renderer)) for world in worlds]
    assert all(image.shape == (320, 480, 3) for image in images)
    assert all(np.abs(a.astype(int) - b).mean() > 0.1 for a, b in zip(images, images[1:]))  # each step shows
    floor = min_pixels_for(480, 320)
    for world in question["steps"]:
        counts, _ = renderer.index_pass(world, studio, tmp_path)
        # placed on the Pillow pass; Blender's geometry differs a little, so a margin of a quarter
        assert min(counts, default=floor) >= 0.75 * floor
