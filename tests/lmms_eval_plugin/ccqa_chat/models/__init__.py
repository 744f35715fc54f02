"""The models of the ``ccqa_chat`` plugin: :data:`AVAILABLE_MODELS` (the ``LMMS_EVAL_PLUGINS``
route) and :func:`manifest` (the ``lmms_eval.models`` entry point)."""

#: ``LMMS_EVAL_PLUGINS`` reads this: model name -> class in ``ccqa_chat.models.<model name>``.
AVAILABLE_MODELS = {"ccqa_fixed_chat": "FixedChat"}


def manifest():
    """The entry point's payload: ``ccqa_fixed_chat`` as a chat model.

    >>> manifest().chat_class_path
    'ccqa_chat.models.ccqa_fixed_chat.FixedChat'
    """
    from lmms_eval.models.registry_v2 import ModelManifest

    return ModelManifest(model_id="ccqa_fixed_chat", chat_class_path="ccqa_chat.models.ccqa_fixed_chat.FixedChat")
