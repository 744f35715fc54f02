"""CLEVR's render_images.py controls with Blender for real (``make test-render``): CLEVR-style
jitter, a ``--properties_json`` vocabulary with a colour of its own, CLEVR's bounces and tile
size, and ``--save_blendfiles``."""

from __future__ import annotations

import json

import numpy as np
import pytest
from PIL import Image

from builder_utils.clevr.synth import WorldOptions, write_clevr_folder
from builder_utils.clevr.synth.folder import ImageOptions
from builder_utils.ownership import read_record

# CLEVR's red and blue, and a pink CLEVR does not have: the studio draws what the file says
PROPERTIES = {"shapes": {"cube": "SmoothCube_v2", "sphere": "Sphere", "cylinder": "SmoothCylinder"},
              "colors": {"red": [173, 35, 35], "blue": [42, 75, 215], "pink": [255, 60, 200]},
              "materials": {"rubber": "Rubber"}, "sizes": {"large": 0.7, "small": 0.35}}
JITTER = {"key_light_jitter": 1.0, "fill_light_jitter": 1.0, "back_light_jitter": 1.0, "camera_jitter": 0.5}


def _linear(srgb: np.ndarray) -> np.ndarray:
    c = srgb / 255.0
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def _nearest(pixel: np.ndarray) -> str:
    seen = _linear(pixel)
    seen = seen / max(seen.sum(), 1e-9)
    rgb = {name: np.asarray(value, dtype=np.float64) for name, value in PROPERTIES["colors"].items()}
    return min(rgb, key=lambda name: float(np.abs(seen - rgb[name] / rgb[name].sum()).sum()))


@pytest.fixture(scope="module")
def jittered(tmp_path_factory):
    folder = tmp_path_factory.mktemp("controls")
    properties = folder / "properties.json"
    properties.write_text(json.dumps(PROPERTIES))
    world = WorldOptions(properties_json=str(properties), **JITTER)
    images = ImageOptions(renderer="blender", samples=4, render_min_bounces=8, render_max_bounces=8,
                          render_tile_size=256, save_blendfiles=True)
    return write_clevr_folder(folder / "W", {"val": 3}, seed=8, images=images, world=world, progress=False)


def test_the_vocabulary_of_the_properties_file_is_drawn(jittered):
    # read as JSON: load_scenes checks the names against the question engine's metadata, which
    # knows no pink (generate-questions takes a --metadata_file that lists it)
    scenes = json.loads((jittered / "scenes" / "CLEVR_val_scenes.json").read_text())["scenes"]
    objects = [(scene, o) for scene in scenes for o in scene["objects"]]
    assert {o["color"] for _, o in objects} <= set(PROPERTIES["colors"]) and {o["material"] for _, o in objects} == {
        "rubber"}
    hits = total = 0
    for scene, obj in objects:
        with Image.open(jittered / "images" / "val" / scene["image_filename"]) as image:
            pixels = np.asarray(image.convert("RGB")).astype(np.float64)
        x, y = obj["pixel_coords"][:2]
        patch = pixels[max(0, y - 2): y + 3, max(0, x - 2): x + 3].reshape(-1, 3).mean(axis=0)
        total += 1
        hits += _nearest(patch) == obj["color"]  # rubber: the colour shows at the centre (unless occluded)
    assert total >= 6 and hits >= 0.75 * total, f"{hits} of {total} objects show their colour"


def test_the_jitter_is_recorded_and_moves_each_scene_s_camera(jittered):
    doc = json.loads((jittered / "scenes" / "CLEVR_val_scenes.json").read_text())
    assert {k: doc["info"]["controls"][k] for k in JITTER} == JITTER
    assert doc["info"]["images"]["render_max_bounces"] == 8 and doc["info"]["images"]["render_tile_size"] == 256
    directions = [json.dumps(scene["directions"]) for scene in doc["scenes"]]
    assert len(set(directions)) == 3  # each scene has a camera of its own


def test_save_blendfiles_writes_each_scene_s_blender_file(jittered):
    record, _ = read_record(jittered)
    blends = sorted(path for path in record if path.startswith("blendfiles/"))
    assert blends == [f"blendfiles/val/CLEVR_val_{k:06d}.blend" for k in range(3)]
    assert all((jittered / path).stat().st_size > 10_000 for path in blends)


# -- CLEVR's asset files: stand-ins made here with bpy (CLEVR's own are never shipped) ----------

MAKE_ASSETS = r'''
import sys
import bpy

out = sys.argv[-1]
bpy.ops.wm.read_factory_settings(use_empty=True)
target = bpy.data.objects.new("Empty", None)
def tracked(obj):
    constraint = obj.constraints.new("TRACK_TO")
    constraint.target, constraint.track_axis, constraint.up_axis = target, "TRACK_NEGATIVE_Z", "UP_Y"
    return obj
camera_data = bpy.data.cameras.new("Camera")
camera_data.lens, camera_data.sensor_width = 35.0, 32.0
camera = tracked(bpy.data.objects.new("Camera", camera_data))
camera.location = (7.48, -6.51, 5.34)
lamps = []
for name, location, power in (("Lamp_Key", (6.4, -2.9, 4.3), 300.0), ("Lamp_Fill", (-4.7, -4.0, 3.0), 80.0),
                              ("Lamp_Back", (-1.2, 2.6, 5.8), 150.0)):
    light = bpy.data.lights.new(name, type="AREA")
    light.energy = power
    lamp = tracked(bpy.data.objects.new(name, light))
    lamp.location = location
    lamps.append(lamp)
ground_mesh = bpy.data.meshes.new("Ground")
ground_mesh.from_pydata([(-40, -40, 0), (40, -40, 0), (40, 40, 0), (-40, 40, 0)], [], [(0, 1, 2, 3)])
ground = bpy.data.objects.new("Ground", ground_mesh)
world = bpy.data.worlds.new("World")
bpy.data.libraries.write(f"{out}/base_scene.blend", {target, camera, *lamps, ground, world})
for name, add in (("SmoothCube_v2", bpy.ops.mesh.primitive_cube_add), ("Sphere", bpy.ops.mesh.primitive_uv_sphere_add),
                  ("SmoothCylinder", bpy.ops.mesh.primitive_cylinder_add)):
    mesh = bpy.data.meshes.new(name)
    import bmesh
    bm = bmesh.new()
    {"SmoothCube_v2": lambda: bmesh.ops.create_cube(bm, size=2.0),
     "Sphere": lambda: bmesh.ops.create_uvsphere(bm, u_segments=32, v_segments=16, radius=1.0),
     "SmoothCylinder": lambda: bmesh.ops.create_cone(bm, cap_ends=True, segments=32, radius1=1.0, radius2=1.0,
                                                     depth=2.0)}[name]()
    bm.to_mesh(mesh)
    bm.free()
    shape = bpy.data.objects.new(name, mesh)
    bpy.data.libraries.write(f"{out}/shapes/{name}.blend", {shape})
for name in ("Rubber", "MyMetal"):
    # a marker, not a material: pure green light whatever the Color input, so the test sees it was used
    group = bpy.data.node_groups.new(name, "ShaderNodeTree")
    group.interface.new_socket("Color", in_out="INPUT", socket_type="NodeSocketColor")
    group.interface.new_socket("Shader", in_out="OUTPUT", socket_type="NodeSocketShader")
    outputs = group.nodes.new("NodeGroupOutput")
    emission = group.nodes.new("ShaderNodeEmission")
    emission.inputs["Color"].default_value = (0.0, 1.0, 0.0, 1.0)
    group.links.new(emission.outputs[0], outputs.inputs["Shader"])
    bpy.data.libraries.write(f"{out}/materials/{name}.blend", {group})
'''


@pytest.fixture(scope="module")
def asset_world(tmp_path_factory):
    import os
    import subprocess
    from pathlib import Path

    assets = tmp_path_factory.mktemp("assets")
    (assets / "shapes").mkdir()
    (assets / "materials").mkdir()
    script = assets / "make_assets.py"
    script.write_text(MAKE_ASSETS)
    executable = os.environ["CLEVR_BLENDER"]
    command = [executable, str(script)] if Path(executable).name.startswith("python") else [
        executable, "--background", "--factory-startup", "--python", str(script), "--"]
    subprocess.run([*command, str(assets)], check=True, capture_output=True, timeout=300)
    images = ImageOptions(renderer="blender", samples=2, base_scene_blendfile=str(assets / "base_scene.blend"),
                          shape_dir=str(assets / "shapes"), material_dir=str(assets / "materials"))
    root = write_clevr_folder(assets / "W", {"val": 2}, seed=3, images=images, world=WorldOptions(camera_jitter=0.0),
                              progress=False)
    return root


def test_clevr_s_asset_files_draw_the_world(asset_world):
    from builder_utils.clevr.synth.camera import Camera

    doc = json.loads((asset_world / "scenes" / "CLEVR_val_scenes.json").read_text())
    assert doc["info"]["images"]["base_scene_blendfile"] == "base_scene.blend"
    theirs, ours = Camera(location=(7.48, -6.51, 5.34)), Camera()
    green = total = 0
    off = {"theirs": [], "ours": []}  # pixels between Blender's pixel_coords and each camera's projection
    for scene in doc["scenes"]:
        with Image.open(asset_world / "images" / "val" / scene["image_filename"]) as image:
            pixels = np.asarray(image.convert("RGB")).astype(np.float64)
        for obj in scene["objects"]:
            x, y = obj["pixel_coords"][:2]
            off["theirs"].append(np.hypot(*np.subtract(theirs.project_point(obj["3d_coords"])[:2], (x, y))))
            off["ours"].append(np.hypot(*np.subtract(ours.project_point(obj["3d_coords"])[:2], (x, y))))
            r, g, b = pixels[y, x]
            total += 1
            green += g > 200 and r < 60 and b < 60  # the material file's marker
    assert total >= 6 and green >= 0.75 * total, f"{green} of {total} objects show the material file's marker"
    # the base scene's camera made the projection (our studio's camera is CLEVR's own since issue 35)
    assert np.mean(off["theirs"]) < 1.0, off
