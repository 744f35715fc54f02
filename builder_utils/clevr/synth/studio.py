"""A scene's studio, decided by the world's seed whoever draws it: CLEVR's camera and three lights,
with CLEVR's jitter drawn from the scene's own stream (the facts of CLEVR's public base_scene.blend).

Both renderers light the world with :data:`LIGHTS`; :func:`world_camera` is the camera a synthetic
scene is placed, checked and drawn with.
"""

from __future__ import annotations

import zlib

import numpy as np

from .camera import CLEVR_CAMERA_LOCATION, Camera

__all__ = ["CAMERA_JITTER", "LIGHTS", "LIGHT_JITTER", "still_studio", "studio_for", "world_camera"]

# CLEVR's jitter (render_images.py: --camera_jitter 0.5, --key/fill/back_light_jitter 1.0),
# uniform in +-jitter along each axis.
CAMERA_JITTER = 0.5
LIGHT_JITTER = 1.0
# CLEVR's lights, read from its public base_scene.blend (bpy 5.0.1's units): square area lights
# aimed at the origin, location (world units), side (m), power (W), colour (linear RGB): a warm
# key light on the camera's right (shadows fall back-left), a cool fill on its left, a white back
# light behind the scene. Its sun is fixed (no jitter): blender_script.py.
LIGHTS = {
    "key": {"location": (6.4467, -2.9052, 4.2584), "size": 0.5, "power": 78.54, "color": (1.0, 0.9323, 0.8167)},
    "fill": {"location": (-4.6711, -4.0136, 3.0112), "size": 0.5, "power": 23.562, "color": (0.7617, 0.8177, 1.0)},
    "back": {"location": (-1.1685, 2.646, 5.8157), "size": 1.0, "power": 39.27, "color": (1.0, 1.0, 1.0)},
}
_STUDIO_STREAM = 0x57D10  # the spawn key of the studio's stream, beside the scene's own


def studio_for(seed: int, split: str, image_index: int, jitter: dict[str, float] | None = None) -> dict:
    """Camera and lights of one scene, CLEVR's jitter drawn from the scene's own stream (any worker).

    ``jitter``: ``camera_jitter`` and ``{key,fill,back}_light_jitter`` (default CLEVR's); every
    draw is made whatever the amounts, so each amount moves only its own object.

    Example:
        >>> studio = studio_for(0, "val", 3)
        >>> studio == studio_for(0, "val", 3), sorted(studio["lights"]), len(studio["camera"])
        (True, ['back', 'fill', 'key'], 3)
        >>> studio_for(0, "val", 3, {"camera_jitter": 0.0})["camera"] == list(CLEVR_CAMERA_LOCATION)
        True
    """
    jitter = jitter or {}
    split_code = zlib.crc32(split.encode("utf-8"))
    rng = np.random.default_rng(np.random.SeedSequence(entropy=seed, spawn_key=(split_code, image_index,
                                                                                  _STUDIO_STREAM)))
    amount = jitter.get("camera_jitter", CAMERA_JITTER)
    camera = [c + float(rng.uniform(-amount, amount)) for c in CLEVR_CAMERA_LOCATION]
    lights = {}
    for name, light in LIGHTS.items():
        amount = jitter.get(f"{name}_light_jitter", LIGHT_JITTER)
        location = [c + float(rng.uniform(-amount, amount)) for c in light["location"]]
        lights[name] = {**light, "location": location}
    return {"camera": camera, "lights": lights, "seed": int(rng.integers(0, 2**31 - 1))}


def still_studio(camera_location, seed: int = 0) -> dict:
    """A studio with its camera at ``camera_location`` and the lights without jitter (a camera
    recovered from an official image's ``pixel_coords``: CLEVR's light jitter cannot be recovered).

    Example:
        >>> still_studio((7.5, -6.5, 5.3))["lights"]["key"]["location"] == list(LIGHTS["key"]["location"])
        True
    """
    lights = {name: {**light, "location": list(light["location"])} for name, light in LIGHTS.items()}
    return {"camera": [float(c) for c in camera_location], "lights": lights, "seed": int(seed)}


def world_camera(seed: int, split: str, image_index: int, width: int = 480, height: int = 320) -> Camera:
    """The camera of one scene of a synthetic world: CLEVR's, with CLEVR's jitter drawn from the
    scene's own stream (:func:`studio_for`), whichever renderer draws the world.

    Example:
        >>> world_camera(0, "val", 3).location == tuple(studio_for(0, "val", 3)["camera"])
        True
    """
    return Camera(location=tuple(studio_for(seed, split, image_index)["camera"]), width=width, height=height)
