"""pytest's settings for the whole tree (the test options themselves are in setup.cfg)."""

# The Blender studio is a program run by a Blender interpreter: it imports bpy, which the
# package never does, so it is not collected for doctests (tests/render/ runs it for real).
collect_ignore = ["builder_utils/clevr/synth/blender_script.py", "builder_utils/clevr/synth/clevr_assets.py"]  # and its CLEVR-asset studio
