"""pytest's settings for the whole tree (the test options themselves are in setup.cfg)."""

# The Blender studio is a program run by a Blender interpreter: it imports bpy, which the
# package never does, so it is not collected for doctests (tests/render/ runs it for real).
# The ms-swift plugins are files ms-swift imports (--external_plugins): they import swift, which
# the package never installs (make test-swift runs them).
collect_ignore = ["builder_utils/clevr/synth/blender_script.py", "builder_utils/clevr/synth/clevr_assets.py",
                  "clevr_math/swift_plugin.py", "clotho_aqa/swift_plugin.py"]
