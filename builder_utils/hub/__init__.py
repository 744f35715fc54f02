"""Hub export and push for our builders (README.md, this package)."""

from builder_utils.lazy import lazy_exports

# Names are imported on first use: `import builder_utils.hub.layout` (or the CLI's listing) must
# not pay for the export and push modules (datasets, huggingface_hub).
__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    "CardError": "builder_utils.hub.card",
    "CardTemplate": "builder_utils.hub.card",
    "load_card_template": "builder_utils.hub.card",
    "add_export_subcommand": "builder_utils.hub.cli",
    "add_push_subcommand": "builder_utils.hub.cli",
    "ExportError": "builder_utils.hub.export",
    "ExportResult": "builder_utils.hub.export",
    "export_builder": "builder_utils.hub.export",
    "load_exported": "builder_utils.hub.load",
    "MediaJoinError": "builder_utils.hub.media",
    "attach_media": "builder_utils.hub.media",
    "PushError": "builder_utils.hub.push",
    "PushPlan": "builder_utils.hub.push",
    "PushResult": "builder_utils.hub.push",
    "UploadPlan": "builder_utils.hub.push",
    "plan_push": "builder_utils.hub.push",
    "plan_upload": "builder_utils.hub.push",
    "push_folder": "builder_utils.hub.push",
})
