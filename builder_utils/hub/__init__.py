"""Hub export and push for our builders: the ``push_to_hub`` layout written locally, dataset
cards filled with real statistics, and an upload that keeps other configurations.

Example:
    >>> from builder_utils.hub import export_builder, load_exported  # doctest: +SKIP
    >>> export_builder(ClevrMath, "hub/clevr_math", card_template="clevr_math", data_dir="CLEVR_v1.0")  # doctest: +SKIP
    >>> load_exported("hub/clevr_math", "multihop")["test"].num_rows                                    # doctest: +SKIP
"""

from builder_utils.hub.card import CardError, CardTemplate, load_card_template
from builder_utils.hub.cli import add_export_subcommand, add_push_subcommand, export_command, push_command
from builder_utils.hub.export import ExportError, ExportResult, export_builder
from builder_utils.hub.load import load_exported
from builder_utils.hub.media import MediaJoinError, attach_media
from builder_utils.hub.push import PushError, UploadPlan, plan_upload, push_folder

__all__ = [
    "add_export_subcommand",
    "add_push_subcommand",
    "attach_media",
    "CardError",
    "CardTemplate",
    "ExportError",
    "ExportResult",
    "PushError",
    "UploadPlan",
    "export_builder",
    "export_command",
    "load_card_template",
    "load_exported",
    "MediaJoinError",
    "plan_upload",
    "push_command",
    "push_folder",
]
