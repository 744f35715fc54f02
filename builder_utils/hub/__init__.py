"""Hub export and push for our builders: the ``push_to_hub`` layout written locally, dataset
cards filled with real statistics, and an upload that keeps other configurations.

Example::

    from builder_utils.hub import export_builder, load_exported
    export_builder(ClevrMath, "hub/clevr_math", card_template="clevr_math", data_dir="CLEVR_v1.0")
    load_exported("hub/clevr_math", "multihop")["test"].num_rows
"""

from builder_utils.hub.card import CardError, CardTemplate, load_card_template
from builder_utils.hub.cli import add_export_subcommand, add_push_subcommand
from builder_utils.hub.export import ExportError, ExportResult, export_builder
from builder_utils.hub.load import load_exported
from builder_utils.hub.media import MediaJoinError, attach_media
from builder_utils.hub.push import PushError, PushPlan, PushResult, UploadPlan, plan_push, plan_upload, push_folder

__all__ = [
    "add_export_subcommand",
    "add_push_subcommand",
    "attach_media",
    "CardError",
    "CardTemplate",
    "ExportError",
    "ExportResult",
    "PushError",
    "PushPlan",
    "PushResult",
    "UploadPlan",
    "export_builder",
    "load_card_template",
    "load_exported",
    "MediaJoinError",
    "plan_push",
    "plan_upload",
    "push_folder",
]
