"""CLEVR's own asset files in the studio (``--base_scene_blendfile``, ``--shape_dir``, ``--material_dir``).

Runs inside the Blender process beside ``blender_script.py`` (it imports ``bpy``, GPL-3; the
package never imports it). Nothing of CLEVR's is shipped: the user passes the files of their copy
of CLEVR's repository. What is used of them, as CLEVR's renderer used them:

- the base scene: its camera (``Camera``) and three lights (``Lamp_Key``, ``Lamp_Fill``,
  ``Lamp_Back``) keep their rotation, strength and colour; each scene moves their locations by
  the studio's jitter (the offsets of :func:`builder_utils.clevr.synth.blender.studio_for` from
  our studio's centre), and ``Ground`` is the floor;
- a shape file ``<shape_dir>/<Name>.blend`` holds one object ``<Name>`` spanning -1..1: each
  object of a scene is a copy (its modifiers too), scaled by its radius, standing at z = radius
  and turned by the scene graph's ``rotation`` number taken as radians, as CLEVR's loader did;
- a material file ``<material_dir>/<Name>.blend`` holds a node group ``<Name>`` with a ``Color``
  input and a ``Shader`` output: one material per colour wraps it.

Whatever is not given stays our studio's own.
"""

import bpy
from mathutils import Vector

LIGHTS = {"key": "Lamp_Key", "fill": "Lamp_Fill", "back": "Lamp_Back"}


def _load(path: str, kind: str, name: str):
    """The datablock ``name`` of ``kind`` (``objects``, ``node_groups``) from the .blend file ``path``."""
    with bpy.data.libraries.load(path) as (source, target):
        if name not in getattr(source, kind):
            raise RuntimeError(f"{path}: no {kind[:-1].replace('_', ' ')} named {name!r} (CLEVR's files have one)")
        setattr(target, kind, [name])
    return getattr(target, kind)[0]


def _group_material(studio, label: str, group, rgb) -> object:
    def shader(tree):
        node = tree.nodes.new("ShaderNodeGroup")
        node.node_tree = group
        # CLEVR's 0-255 colours taken as linear values, as everywhere in the studio
        node.inputs["Color"].default_value = (rgb[0] / 255.0, rgb[1] / 255.0, rgb[2] / 255.0, 1.0)
        return node.outputs["Shader"]

    return studio.surface_material(label, shader)


def asset_studio(Studio):
    """A subclass of the script's ``Studio`` that draws with CLEVR's asset files (given in ``settings["assets"]``).

    Example (prose: it runs inside Blender, called by ``blender_script.py``)::

        studio = asset_studio(Studio)(settings)   # settings["assets"]: (base, shape_dir, material_dir, names...)
        studio.place_studio(studio_dict); studio.place_objects(scene); studio.render_image(path, seed)
    """

    class ClevrAssetStudio(Studio):
        def __init__(self, settings: dict):
            super().__init__(settings)  # our studio first; what CLEVR's files give then replaces it
            base, shape_dir, material_dir, shapes, materials = settings["assets"]
            self.base_locations = None
            if base is not None:
                self._use_base_scene(base)
            self.templates = {}
            for shape, stem in shapes or ():
                if shape_dir is not None:
                    template = _load(f"{shape_dir}/{stem}.blend", "objects", stem)
                    if not template.data.materials:
                        template.data.materials.append(None)  # one slot, filled per object (link OBJECT)
                    self.templates[shape] = template
            if material_dir is not None:
                for kind, stem in materials or ():
                    group = _load(f"{material_dir}/{stem}.blend", "node_groups", stem)
                    for colour, rgb in self.colours.items():
                        self.materials[(colour, kind)] = _group_material(self, f"{stem}-{colour}", group, rgb)

        def _use_base_scene(self, base: str) -> None:
            # every object of the base scene (the lamps and camera track its Empty at the origin)
            with bpy.data.libraries.load(base) as (source, target):
                target.objects = list(source.objects)
                target.worlds = list(source.worlds[:1])
            loaded = {obj.name: obj for obj in target.objects if obj is not None}
            missing = [name for name in ("Camera", "Ground", *LIGHTS.values()) if name not in loaded]
            if missing:
                raise RuntimeError(f"{base}: no {', '.join(missing)} (CLEVR's base_scene.blend has them)")
            # the whole of our studio goes (floor, camera, lights, a sun...): the base scene replaces it
            for obj in list(self.scene.collection.all_objects):
                bpy.data.objects.remove(obj, do_unlink=True)
            for obj in loaded.values():
                self.scene.collection.objects.link(obj)
            if target.worlds:
                self.scene.world = target.worlds[0]
            self.camera = self.scene.camera = loaded["Camera"]
            self.lights = {name: loaded[file_name] for name, file_name in LIGHTS.items()}
            self.backdrop = loaded["Ground"]
            self.base_locations = {name: Vector(obj.location) for name, obj in
                                   [("camera", self.camera), *self.lights.items()]}

        def place_studio(self, studio: dict) -> None:
            if self.base_locations is None:
                return super().place_studio(studio)
            # CLEVR's jitter moves the file's camera and lamps (they keep tracking the origin)
            centre = self.settings["studio_centre"]
            self.camera.location = self.base_locations["camera"] + Vector(studio["camera"]) - Vector(centre["camera"])
            for name, light in studio["lights"].items():
                offset = Vector(light["location"]) - Vector(centre["lights"][name])
                self.lights[name].location = self.base_locations[name] + offset

        def place_objects(self, scene: dict) -> None:
            before = self.scene_key
            super().place_objects(scene)
            if self.scene_key == before or not self.templates:
                return  # the same objects as last time: already CLEVR's shapes
            for k, spec in enumerate(scene["objects"]):
                template = self.templates.get(spec["shape"])
                if template is None:
                    continue
                old = self.objects[k]
                obj = template.copy()  # shares CLEVR's mesh, copies its modifiers
                obj.location, obj.scale = old.location.copy(), old.scale.copy()
                # CLEVR's loader set the recorded number (0-360) as radians
                obj.rotation_euler = (0.0, 0.0, float(spec.get("rotation", 0.0)))
                obj.pass_index = old.pass_index
                obj.material_slots[0].link = "OBJECT"
                obj.material_slots[0].material = old.material_slots[0].material
                bpy.data.objects.remove(old, do_unlink=True)
                obj.name = f"object-{k}"
                self.scene.collection.objects.link(obj)
                self.objects[k] = obj

    return ClevrAssetStudio
