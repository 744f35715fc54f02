"""The CLEVR studio in Blender: run by a Blender interpreter, never imported by the package.

It imports ``bpy`` (GPL-3), so :mod:`builder_utils.clevr.synth.blender` runs it apart: one JSON
reply line on the reply descriptor (stdout is Blender's chatter) per request line of stdin, ops
``index`` (object k in red (k + 1) / ``index_levels``), ``depth`` (grey: depth / ``depth_range``, 16 bits)
and ``render``; an error reply does not end it.
"""

import json
import math
import os
import sys
import time
import traceback

import bpy  # first: with the bpy module, bmesh and mathutils exist only after it
import bmesh  # noqa: E402
from bpy_extras.object_utils import world_to_camera_view
from mathutils import Vector

# CLEVR's ground (base_scene.blend) is one sheet, flat under the objects, rising far behind them in
# a long curve into a wall; the curve rises towards this azimuth (radians, world z) whatever the
# camera. Our own sweep of that shape: flat until BACKDROP_START beyond the origin, then an arc of
# BACKDROP_RADIUS up into a wall.
BACKDROP_AZIMUTH = 1.128
BACKDROP_START = 8.0
BACKDROP_RADIUS = 10.0
STUDIO_EXTENT = 60.0
# rounded edges, as CLEVR's shape files (fractions of the half-size)
CUBE_BEVEL = 0.23
CYLINDER_BEVEL = 0.09
# CLEVR's sun (base_scene.blend): fixed, faint, slightly soft
SUN_ROTATION = (0.236, 0.4169, 0.0971)
SUN_STRENGTH = 0.45
SUN_ANGLE = 0.1993
# CLEVR's Rubber: diffuse, with sheen at grazing angles (Fresnel of IOR + 0.2) and a rough white
# gloss (Fresnel of IOR; roughness sqrt(0.35)); its MyMetal: two anisotropic GGX lobes
RUBBER_IOR = 1.2
RUBBER_GLOSS_ROUGHNESS = 0.35 ** 0.5
RUBBER_SHEEN_ROUGHNESS = 0.6
METAL_LOBES = ((0.4, 0.4472), (0.6, 0.1))  # (weight, roughness)
METAL_ANISOTROPY = 0.25


def _reply(fd: int, message: dict) -> None:
    os.write(fd, (json.dumps(message) + "\n").encode("utf-8"))


def _set_input(node, name, value) -> None:
    socket = node.inputs.get(name)
    if socket is not None:
        socket.default_value = value


def _new_material(name: str):
    material = bpy.data.materials.new(name)
    if material.node_tree is None:  # Blender before 5.0 creates the node tree on request
        material.use_nodes = True
    return material


def surface_material(name: str, shader):
    """A material whose surface is ``shader(tree)`` (a node output socket) and nothing else: the
    default nodes go, the output node stays. Also serves clevr_assets.py (as ``Studio.surface_material``)."""
    material = _new_material(name)
    tree = material.node_tree
    for node in list(tree.nodes):
        if node.bl_idname != "ShaderNodeOutputMaterial":
            tree.nodes.remove(node)
    output = next(n for n in tree.nodes if n.bl_idname == "ShaderNodeOutputMaterial")
    tree.links.new(shader(tree), output.inputs["Surface"])
    return material


def _linear(rgb) -> tuple:
    # CLEVR's renderer took its 0-255 colours as linear values
    return (rgb[0] / 255.0, rgb[1] / 255.0, rgb[2] / 255.0, 1.0)


def _object_material(colour: str, rgb, material_kind: str):
    """CLEVR's two materials rebuilt as node graphs (their settings are facts read from its files)."""
    shader = _metal if material_kind == "metal" else _rubber
    return surface_material(f"{material_kind}-{colour}", lambda tree: shader(tree, _linear(rgb)))


def _mix(tree, factor, first, second):
    mix = tree.nodes.new("ShaderNodeMixShader")
    if isinstance(factor, float):
        mix.inputs[0].default_value = factor
    else:
        tree.links.new(factor, mix.inputs[0])
    tree.links.new(first, mix.inputs[1])
    tree.links.new(second, mix.inputs[2])
    return mix.outputs[0]


def _fresnel(tree, ior: float):
    node = tree.nodes.new("ShaderNodeFresnel")
    node.inputs["IOR"].default_value = ior
    return node.outputs[0]


def _rubber(tree, colour):
    diffuse = tree.nodes.new("ShaderNodeBsdfDiffuse")
    diffuse.inputs["Color"].default_value = colour
    sheen = tree.nodes.new("ShaderNodeBsdfSheen")
    sheen.distribution = "ASHIKHMIN"
    sheen.inputs["Color"].default_value = colour
    _set_input(sheen, "Roughness", RUBBER_SHEEN_ROUGHNESS)
    gloss = tree.nodes.new("ShaderNodeBsdfGlossy")
    gloss.distribution = "BECKMANN"
    gloss.inputs["Color"].default_value = (0.8, 0.8, 0.8, 1.0)
    gloss.inputs["Roughness"].default_value = RUBBER_GLOSS_ROUGHNESS
    base = _mix(tree, _fresnel(tree, RUBBER_IOR + 0.2), diffuse.outputs[0], sheen.outputs[0])
    return _mix(tree, _fresnel(tree, RUBBER_IOR), base, gloss.outputs[0])


def _metal(tree, colour):
    lobes = []
    for _, roughness in METAL_LOBES:
        lobe = tree.nodes.new("ShaderNodeBsdfGlossy")
        lobe.distribution = "GGX"
        lobe.inputs["Color"].default_value = colour
        lobe.inputs["Roughness"].default_value = roughness
        _set_input(lobe, "Anisotropy", METAL_ANISOTROPY)
        lobes.append(lobe.outputs[0])
    return _mix(tree, METAL_LOBES[1][0], lobes[0], lobes[1])


def _index_material(levels: int):
    """Emission of red = object index / ``levels``, linear (the studio has index 0: black),
    written untouched (view transform "Raw", no dither): the driver decodes round(R / 255 * levels)."""
    def shader(tree):
        info = tree.nodes.new("ShaderNodeObjectInfo")
        combine = tree.nodes.new("ShaderNodeCombineColor")
        tree.links.new(_divided(tree, info.outputs["Object Index"], levels), combine.inputs[0])
        return _emission(tree, combine.outputs[0])

    return surface_material("object-index", shader)


def _divided(tree, socket, by: float):
    divide = tree.nodes.new("ShaderNodeMath")
    divide.operation = "DIVIDE"
    divide.inputs[1].default_value = float(by)
    tree.links.new(socket, divide.inputs[0])
    return divide.outputs[0]


def _emission(tree, colour):
    emission = tree.nodes.new("ShaderNodeEmission")
    emission.inputs["Strength"].default_value = 1.0
    tree.links.new(colour, emission.inputs["Color"])
    return emission.outputs[0]


def _depth_material(depth_range: float):
    """Emission of grey = the depth along the camera's axis / ``depth_range`` (written raw, 16 bits)."""
    def shader(tree):
        camera = tree.nodes.new("ShaderNodeCameraData")
        # a value into a colour is grey: all three channels, so the grey PNG keeps it whole
        return _emission(tree, _divided(tree, camera.outputs["View Z Depth"], depth_range))

    return surface_material("depth", shader)


def _mesh_from(bm, name: str):
    mesh = bpy.data.meshes.new(name)
    bm.to_mesh(mesh)
    bm.free()
    mesh.materials.append(None)  # one slot, filled per object (link OBJECT)
    return mesh


def _cube_mesh():
    """A cube of half-size 1 with rounded edges (smooth-shaded bevels, flat faces): CLEVR's
    SmoothCube_v2 is flat within 0.77 of the centre on each face, hence a bevel of 0.23."""
    bm = bmesh.new()
    bmesh.ops.create_cube(bm, size=2.0)
    result = bmesh.ops.bevel(bm, geom=list(bm.edges) + list(bm.verts), offset=CUBE_BEVEL, segments=6,
                             profile=0.5, affect="EDGES")
    for face in bm.faces:
        face.smooth = False
    for face in result["faces"]:
        face.smooth = True
    return _mesh_from(bm, "cube")


def _sphere_mesh():
    bm = bmesh.new()
    bmesh.ops.create_uvsphere(bm, u_segments=64, v_segments=32, radius=1.0)
    for face in bm.faces:
        face.smooth = True
    return _mesh_from(bm, "sphere")


def _cylinder_mesh():
    """Radius 1, height 2 (z in -1..1), capped, both rims rounded (CLEVR's SmoothCylinder: the side
    straight within 0.9 of the middle, the lid flat within 0.92 of the axis)."""
    bm = bmesh.new()
    bmesh.ops.create_cone(bm, cap_ends=True, cap_tris=False, segments=64, radius1=1.0, radius2=1.0, depth=2.0)
    rims = [e for e in bm.edges if abs(e.verts[0].co.z - e.verts[1].co.z) < 1e-6 and len(e.link_faces) == 2
            and any(len(f.verts) > 4 for f in e.link_faces)]
    result = bmesh.ops.bevel(bm, geom=rims, offset=CYLINDER_BEVEL, segments=4, profile=0.5, affect="EDGES")
    for face in bm.faces:
        face.smooth = len(face.verts) <= 4
    for face in result["faces"]:
        face.smooth = True
    return _mesh_from(bm, "cylinder")


def _backdrop_mesh():
    """Floor and backdrop as one sheet along +y: flat until BACKDROP_START, an arc of
    BACKDROP_RADIUS up, then a wall. Turned later so that +y points along BACKDROP_AZIMUTH."""
    profile = [(-STUDIO_EXTENT, 0.0)]
    steps = 32
    for k in range(steps + 1):
        a = 0.5 * math.pi * k / steps
        profile.append((BACKDROP_START + BACKDROP_RADIUS * math.sin(a), BACKDROP_RADIUS * (1.0 - math.cos(a))))
    profile.append((BACKDROP_START + BACKDROP_RADIUS, STUDIO_EXTENT))
    bm = bmesh.new()
    rows = [[bm.verts.new((x, y, z)) for (y, z) in profile] for x in (-STUDIO_EXTENT, STUDIO_EXTENT)]
    for k in range(len(profile) - 1):
        face = bm.faces.new((rows[0][k], rows[1][k], rows[1][k + 1], rows[0][k + 1]))
        face.smooth = True
    bm.normal_update()
    mesh = bpy.data.meshes.new("backdrop")
    bm.to_mesh(mesh)
    bm.free()
    return mesh


class Studio:
    """The Blender scene: built once, objects replaced per request."""

    surface_material = staticmethod(surface_material)  # for subclasses in other files (clevr_assets.py)

    def __init__(self, settings: dict):
        self.settings = settings
        bpy.ops.wm.read_factory_settings(use_empty=True)
        self.scene = bpy.context.scene
        self.colours = settings["colours"]
        self._configure_render()
        self._build_world()
        self.meshes = {"cube": _cube_mesh(), "sphere": _sphere_mesh(), "cylinder": _cylinder_mesh()}
        self.materials = {(c, m): _object_material(c, rgb, m) for c, rgb in self.colours.items()
                          for m in ("metal", "rubber")}
        self.index_material = _index_material(settings["index_levels"])
        self.depth_material = _depth_material(settings["depth_range"])
        self.objects = []
        self.scene_key = None

    # -- set-up ------------------------------------------------------------------------------

    def _configure_render(self) -> None:
        s = self.settings
        scene = self.scene
        render = scene.render
        render.engine = "CYCLES"
        render.resolution_x, render.resolution_y = s["width"], s["height"]
        render.resolution_percentage = 100
        render.use_file_extension = False
        render.image_settings.file_format = "PNG"
        render.image_settings.color_mode = "RGB"
        render.image_settings.color_depth = "8"
        render.image_settings.compression = 60
        render.use_persistent_data = True
        if s.get("threads"):
            render.threads_mode = "FIXED"
            render.threads = int(s["threads"])
        cycles = scene.cycles
        cycles.device = "GPU" if s["device"] == "gpu" else "CPU"
        cycles.max_bounces = 12
        cycles.diffuse_bounces = 4
        cycles.glossy_bounces = 4
        cycles.transmission_bounces = 0
        cycles.volume_bounces = 0
        cycles.transparent_max_bounces = 2
        cycles.caustics_reflective = False
        cycles.caustics_refractive = False
        cycles.blur_glossy = 1.0
        cycles.sample_clamp_indirect = 0.0  # as CLEVR's: a clamp darkens the floor's bounce light
        # three lights need no light tree: without it a sample costs about a fifth less, for about
        # 1 dB less PSNR against 64 samples (measured on this studio)
        cycles.use_light_tree = False
        # at 6-8 samples adaptive sampling stops no pixel early, yet its checks cost ~0.3 CPU-s an image
        cycles.use_adaptive_sampling = False
        _clevr_render_controls(cycles, s)
        scene.view_settings.view_transform = "Standard"  # the look of CLEVR's Blender 2.7x renders
        scene.view_settings.look = "None"
        scene.view_settings.exposure = 0.0
        scene.view_settings.gamma = 1.0

    def _build_world(self) -> None:
        scene = self.scene
        world = bpy.data.worlds.new("studio")
        if world.node_tree is None:
            world.use_nodes = True
        background = next(n for n in world.node_tree.nodes if n.bl_idname == "ShaderNodeBackground")
        background.inputs["Strength"].default_value = 0.0  # CLEVR's world gives no light
        scene.world = world

        # CLEVR's ground has no material: Cycles' default surface, a grey (0.8) diffuse. Given
        # here as a material, so that the object-index pass's override reaches it too
        self.backdrop = bpy.data.objects.new("backdrop", _backdrop_mesh())
        floor = _new_material("studio-floor")
        tree = floor.node_tree
        for node in list(tree.nodes):
            if node.bl_idname != "ShaderNodeOutputMaterial":
                tree.nodes.remove(node)
        diffuse = tree.nodes.new("ShaderNodeBsdfDiffuse")
        diffuse.inputs["Color"].default_value = (0.8, 0.8, 0.8, 1.0)
        tree.links.new(diffuse.outputs[0], next(n for n in tree.nodes if n.bl_idname == "ShaderNodeOutputMaterial").inputs["Surface"])
        self.backdrop.data.materials.append(floor)
        self.backdrop.rotation_euler = (0.0, 0.0, BACKDROP_AZIMUTH - 0.5 * math.pi)
        scene.collection.objects.link(self.backdrop)

        camera_data = bpy.data.cameras.new("camera")
        camera_data.lens = 35.0
        camera_data.sensor_width = 32.0
        camera_data.sensor_fit = "HORIZONTAL"
        camera_data.clip_start = 0.1
        camera_data.clip_end = 200.0
        self.camera = bpy.data.objects.new("camera", camera_data)
        scene.collection.objects.link(self.camera)
        scene.camera = self.camera

        sun = bpy.data.lights.new("sun", type="SUN")
        sun.energy = SUN_STRENGTH
        sun.angle = SUN_ANGLE
        sun_object = bpy.data.objects.new("sun", sun)
        sun_object.rotation_euler = SUN_ROTATION
        scene.collection.objects.link(sun_object)
        self.lights = {}
        for name in ("key", "fill", "back"):
            light = bpy.data.lights.new(name, type="AREA")
            light.shape = "SQUARE"
            obj = bpy.data.objects.new(name, light)
            scene.collection.objects.link(obj)
            self.lights[name] = obj

    # -- per request -------------------------------------------------------------------------

    def place_studio(self, studio: dict) -> None:
        camera = Vector(studio["camera"])
        self.camera.location = camera
        self.camera.rotation_mode = "QUATERNION"
        self.camera.rotation_quaternion = (-camera).to_track_quat("-Z", "Y")
        for name, light in studio["lights"].items():
            obj = self.lights[name]
            obj.location = Vector(light["location"])
            # CLEVR's lights track the origin (a constraint in its file), wherever the jitter puts them
            obj.rotation_mode = "QUATERNION"
            obj.rotation_quaternion = (-Vector(light["location"])).to_track_quat("-Z", "Y")
            obj.data.energy = float(light["power"])
            obj.data.size = float(light["size"])
            obj.data.color = tuple(light.get("color", (1.0, 1.0, 1.0)))

    def place_objects(self, scene: dict) -> None:
        key = json.dumps([scene["objects"]], sort_keys=True)
        if key == self.scene_key:
            return
        for obj in self.objects:
            bpy.data.objects.remove(obj, do_unlink=True)
        self.objects = []
        for k, spec in enumerate(scene["objects"]):
            obj = bpy.data.objects.new(f"object-{k}", self.meshes[spec["shape"]])
            r = self.settings.get("radii", {}).get(spec["size"]) or (0.35 if spec["size"] == "small" else 0.7)
            x, y, z = spec["3d_coords"]
            obj.location = (x, y, z)
            obj.scale = (r, r, r)
            # CLEVR's loader set the scene graph's rotation number (drawn in 0-360) as radians, unconverted:
            # so it drew its cubes, and so they face in its images
            obj.rotation_euler = (0.0, 0.0, float(spec.get("rotation", 0.0)))
            obj.pass_index = k + 1
            obj.material_slots[0].link = "OBJECT"
            obj.material_slots[0].material = self.materials[(spec["color"], spec["material"])]
            self.scene.collection.objects.link(obj)
            self.objects.append(obj)
        self.scene_key = key

    def pixel_coords(self) -> list:
        bpy.context.view_layer.update()
        width, height = self.settings["width"], self.settings["height"]
        coords = []
        for obj in self.objects:
            x, y, depth = world_to_camera_view(self.scene, self.camera, obj.location)
            coords.append([int(round(x * width)), int(round(height - y * height)), float(depth)])
        return coords

    def _render_to(self, path: str) -> None:
        self.scene.render.filepath = path
        bpy.ops.render.render(write_still=True)

    def render_index(self, path: str) -> None:
        self._flat_pass(path, self.index_material, "RGB", "8")

    def render_depth(self, path: str) -> None:
        # grey, 16 bits: a reader (Pillow) keeps all 16 bits of a grey PNG, not of an RGB one
        self._flat_pass(path, self.depth_material, "BW", "16")

    def _flat_pass(self, path: str, material, mode: str, depth: str) -> None:
        """One sample a pixel at its centre, every surface drawn with ``material``, written raw."""
        scene, cycles, view = self.scene, self.scene.cycles, bpy.context.view_layer
        settings = scene.render.image_settings
        saved = (cycles.samples, cycles.use_denoising, cycles.filter_width, cycles.max_bounces,
                 scene.view_settings.view_transform, scene.render.dither_intensity, settings.color_mode,
                 settings.color_depth)
        try:
            cycles.samples = 1
            cycles.use_denoising = False
            cycles.filter_width = 0.01  # the one sample at the pixel's centre: no blend of two objects
            cycles.max_bounces = 0
            scene.view_settings.view_transform = "Raw"
            scene.render.dither_intensity = 0.0
            settings.color_mode, settings.color_depth = mode, depth
            view.material_override = material
            self._render_to(path)
        finally:
            view.material_override = None
            (cycles.samples, cycles.use_denoising, cycles.filter_width, cycles.max_bounces,
             scene.view_settings.view_transform, scene.render.dither_intensity, settings.color_mode,
             settings.color_depth) = saved

    def render_image(self, path: str, seed: int) -> None:
        cycles = self.scene.cycles
        cycles.samples = int(self.settings["samples"])
        cycles.seed = int(seed)
        cycles.use_denoising = bool(self.settings["denoise"])
        if cycles.use_denoising:
            cycles.denoiser = "OPENIMAGEDENOISE"
            cycles.denoising_input_passes = "RGB_ALBEDO_NORMAL"
            cycles.denoising_prefilter = "FAST"
            if hasattr(cycles, "denoising_quality"):
                cycles.denoising_quality = "FAST"
            if hasattr(cycles, "denoising_use_gpu"):
                cycles.denoising_use_gpu = self.settings["device"] == "gpu"
        self._render_to(path)


def _clevr_render_controls(cycles, settings: dict) -> None:
    """CLEVR's --render_min_bounces, --render_max_bounces and --render_tile_size, when given."""
    if settings.get("max_bounces") is not None:
        cycles.max_bounces = int(settings["max_bounces"])
    if settings.get("min_bounces") is not None:
        # Blender 2.7x's min_bounces, renamed in 3.0
        setattr(cycles, "min_light_bounces" if hasattr(cycles, "min_light_bounces") else "min_bounces",
                int(settings["min_bounces"]))
    if settings.get("tile_size") is not None:
        cycles.use_auto_tile = True
        cycles.tile_size = int(settings["tile_size"])


def _studio_class(settings: dict):
    """Our studio, or with CLEVR's asset files (clevr_assets.py, beside this script) when given."""
    if not settings.get("assets"):
        return Studio
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from clevr_assets import asset_studio

    return asset_studio(Studio)


def _use_gpu() -> str:
    """Enable every GPU device of the first backend that has one; returns its name."""
    preferences = bpy.context.preferences.addons["cycles"].preferences
    for backend in ("OPTIX", "CUDA", "HIP", "ONEAPI", "METAL"):
        try:
            preferences.compute_device_type = backend
        except TypeError:
            continue  # not built into this Blender
        preferences.refresh_devices()
        devices = [d for d in preferences.devices if d.type == backend]
        if devices:
            for device in preferences.devices:
                device.use = device.type == backend
            return backend
    raise RuntimeError("--device gpu: Cycles found no GPU (tried OptiX, CUDA, HIP, oneAPI, Metal); use --device cpu")


def _arguments(argv: list) -> dict:
    args = argv[argv.index("--") + 1:] if "--" in argv else argv[1:]
    found = {}
    for flag, value in zip(args[::2], args[1::2]):
        found[flag.lstrip("-")] = value
    return found


def main() -> int:
    args = _arguments(sys.argv)
    fd = int(args["reply-fd"])
    try:
        settings = json.loads(args["settings"])
        backend = _use_gpu() if settings["device"] == "gpu" else "CPU"
        studio = _studio_class(settings)(settings)
    except Exception as exc:
        _reply(fd, {"error": f"studio set-up failed: {type(exc).__name__}: {exc}"})
        return 1
    _reply(fd, {"ready": True, "blender": bpy.app.version_string, "backend": backend})
    for line in sys.stdin:
        if not line.strip():
            continue
        started = time.process_time()
        try:
            request = json.loads(line)
            studio.place_studio(request["studio"])
            studio.place_objects(request["scene"])
            if request["op"] == "index":
                studio.render_index(request["png"])
                answer = {"pixel_coords": studio.pixel_coords()}
            elif request["op"] == "depth":
                studio.render_depth(request["png"])
                answer = {"done": True}
            elif request["op"] == "render":
                studio.render_image(request["png"], request.get("seed", 0))
                if request.get("blend"):  # CLEVR's --save_blendfiles: the studio with this scene
                    bpy.ops.wm.save_as_mainfile(filepath=request["blend"], copy=True, compress=True)
                answer = {"done": True}
            else:
                answer = {"error": f"unknown op {request['op']!r}"}
        except Exception as exc:
            last = traceback.format_exc().strip().splitlines()[-1]
            answer = {"error": f"{type(exc).__name__}: {exc} ({last})"}
        answer["cpu_s"] = time.process_time() - started
        _reply(fd, answer)
    return 0


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    # a Blender executable goes on to its own event handling after --python; leave now
    os._exit(code)
