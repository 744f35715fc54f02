"""A deterministic chat model for lmms-eval, as a plugin package: ``ccqa_fixed_chat``.

lmms-eval 0.7.3 finds a model outside its own tree two ways, and only one works for a chat model:

- **The entry-point group ``lmms_eval.models``** (works): an installed distribution whose entry
  point gives a ``lmms_eval.models.registry_v2.ModelManifest`` (or a callable returning one) with
  ``chat_class_path``; :func:`ccqa_chat.models.manifest` is that payload::

      [lmms_eval.models]
      ccqa_fixed_chat = ccqa_chat.models:manifest

- **``LMMS_EVAL_PLUGINS=ccqa_chat``** (deprecated, fails for chat models): it imports
  ``ccqa_chat.models`` and registers each ``AVAILABLE_MODELS`` entry as a *simple* model, so
  lmms-eval refuses the class (``TypeError: Model 'ccqa_fixed_chat' resolved as simple but
  FixedChat.is_simple is False``), prints the traceback and still exits with status 0.

``tests/test_lmms_eval_harness.py`` installs the package both ways (a ``.dist-info`` folder on
``PYTHONPATH``, as an installer writes it) and runs ``python -m lmms_eval --model ccqa_fixed_chat``.
"""
