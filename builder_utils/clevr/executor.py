"""Running CLEVR functional programs on scenes, fast (README, "Scenes and programs").

Generation executes millions of partial programs, so a node costs one call and a few integer
operations on a per-scene :class:`SceneIndex`. An ObjectSet is an ``int`` bitmask: every set the
language builds is in index order, so a bitmask loses nothing. A new function takes one entry in
``metadata.json`` and one ``@register("name")`` below.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .metadata import ATTRIBUTES, Metadata, default_metadata
from .scenes import validate_scene

__all__ = [
    "FUNCTIONS",
    "CompiledProgram",
    "InvalidProgram",
    "MalformedProgram",
    "SceneIndex",
    "answer",
    "answer_text",
    "compile_program",
    "execute",
    "execute_raw",
    "normalize_program",
    "public_value",
    "register",
]

_INTEGER_LITERAL = re.compile(r"-?[0-9]+")
# Types whose values are ints or bools internally but are not answers by themselves.
_NON_ANSWER_TYPES = frozenset({"Object", "ObjectSet"})


class InvalidProgram(Exception):
    """A well-formed program with no answer on this scene; ``node`` and ``function`` say where.

    >>> str(InvalidProgram("expected exactly one object, found 2", node=3, function="unique"))
    'node 3 (unique): expected exactly one object, found 2'
    """

    def __init__(self, reason: str, node: int | None = None, function: str | None = None):
        super().__init__(reason)
        self.reason = reason
        self.node = node
        self.function = function

    def __str__(self) -> str:
        if self.node is None:
            return self.reason
        return f"node {self.node} ({self.function}): {self.reason}"

    def __reduce__(self):
        return (type(self), (self.reason, self.node, self.function))


class MalformedProgram(ValueError):
    """A program that cannot run on any scene; the message names the node index and function.

    >>> compile_program([{"function": "scene", "inputs": []}, {"function": "count", "inputs": [5]}])
    Traceback (most recent call last):
    ...
    builder_utils.clevr.executor.MalformedProgram: node 1 (count): input 5 is not an earlier node
    """


class SceneIndex:
    """Per-scene lookup tables, built once and shared by every program run on the scene.

    ``attribute_masks[attr][value]`` (every vocabulary value present, 0 if no object has it) and
    ``relation_masks[rel][i]`` (``relate`` of object ``i``) are bitmasks. ``validate=False``: for
    scenes :func:`load_scenes` already validated.

    For example::

        index = SceneIndex(scene)
        bin(index.attribute_masks["color"]["red"])
        # -> '0b101'
    """

    __slots__ = ("scene", "num_objects", "all_mask", "objects", "attribute_masks", "relation_masks")

    def __init__(self, scene: Mapping[str, Any], *, validate: bool = True, metadata: Metadata | None = None):
        metadata = metadata or default_metadata()
        if validate:
            name = scene.get("image_filename") if isinstance(scene, Mapping) else None
            validate_scene(scene, metadata=metadata, where=f"scene ({name})" if isinstance(name, str) else "scene")
        objects = scene["objects"]
        self.scene = scene
        self.num_objects = len(objects)
        self.all_mask = (1 << self.num_objects) - 1
        self.objects = [{attr: obj[attr] for attr in ATTRIBUTES} for obj in objects]
        masks = {attr: dict.fromkeys(metadata.values(type_name), 0) for attr, type_name in ATTRIBUTES.items()}
        for i, obj in enumerate(self.objects):
            bit = 1 << i
            for attr, value in obj.items():
                masks[attr][value] |= bit
        self.attribute_masks = masks
        relation_masks = {}
        for rel, per_object in scene["relationships"].items():
            row = []
            for related in per_object:
                mask = 0
                for j in related:
                    mask |= 1 << j
                row.append(mask)
            relation_masks[rel] = row
        self.relation_masks = relation_masks

    def __repr__(self) -> str:
        return f"SceneIndex({self.scene.get('image_filename')!r}, {self.num_objects} objects)"


# -- the function registry ------------------------------------------------------------------

Impl = Callable[[SceneIndex, Sequence[Any], Sequence[str]], Any]
FUNCTIONS: dict[str, Impl] = {}
"""Function name -> ``impl(index, inputs, value_inputs)`` returning the raw output."""


def register(name: str) -> Callable[[Impl], Impl]:
    """Register the implementation of a language function (it also needs a metadata entry).

    For example::

        @register("count_twice")
        def _count_twice(index, inputs, value_inputs):
            return 2 * inputs[0].bit_count()
    """

    def add(impl: Impl) -> Impl:
        FUNCTIONS[name] = impl
        return impl

    return add


@register("scene")
def _scene(index, inputs, values):
    return index.all_mask


def _define_attribute_functions(attr: str) -> None:
    def filter_(index, inputs, values):
        return inputs[0] & index.attribute_masks[attr][values[0]]

    def query(index, inputs, values):
        return index.objects[inputs[0]][attr]

    def same(index, inputs, values):
        obj = inputs[0]
        return index.attribute_masks[attr][index.objects[obj][attr]] & ~(1 << obj)

    register(f"filter_{attr}")(filter_)
    register(f"query_{attr}")(query)
    register(f"same_{attr}")(same)
    register(f"equal_{attr}")(_equal)


def _equal(index, inputs, values):
    return inputs[0] == inputs[1]


for _attr in ATTRIBUTES:
    _define_attribute_functions(_attr)


@register("unique")
def _unique(index, inputs, values):
    mask = inputs[0]
    if mask and not mask & (mask - 1):
        return mask.bit_length() - 1
    raise InvalidProgram(f"expected exactly one object, found {mask.bit_count()}")


@register("relate")
def _relate(index, inputs, values):
    return index.relation_masks[values[0]][inputs[0]]


@register("union")
def _union(index, inputs, values):
    return inputs[0] | inputs[1]


@register("intersect")
def _intersect(index, inputs, values):
    return inputs[0] & inputs[1]


@register("count")
def _count(index, inputs, values):
    return inputs[0].bit_count()


@register("exist")
def _exist(index, inputs, values):
    return inputs[0] != 0


register("equal_integer")(_equal)
register("equal_object")(_equal)


@register("less_than")
def _less_than(index, inputs, values):
    return inputs[0] < inputs[1]


@register("greater_than")
def _greater_than(index, inputs, values):
    return inputs[0] > inputs[1]


@register("addition")
def _addition(index, inputs, values):
    return inputs[0] + inputs[1]


@register("subtraction")
def _subtraction(index, inputs, values):
    result = inputs[0] - inputs[1]
    if result < 0:
        raise InvalidProgram(f"{inputs[0]} - {inputs[1]} is negative")
    return result


@register("choose")
def _choose(index, inputs, values):
    chosen = int(values[0])
    available = inputs[0].bit_count()
    # 0 is a legal choice ("choose none"); whether a template may draw it is the
    # generator's business (choose nodes draw from 1..|set| unless they allow zero).
    if not 0 <= chosen <= available:
        raise InvalidProgram(f"cannot choose {chosen} out of a set of {available} objects")
    return chosen


# -- programs --------------------------------------------------------------------------------


def _node_error(i: int, function: Any, message: str) -> MalformedProgram:
    where = f"node {i} ({function})" if isinstance(function, str) else f"node {i}"
    return MalformedProgram(f"{where}: {message}")


_MISSING = object()


def _either(node: Mapping, i: int, keys: tuple[str, str], what: str, required: bool) -> Any:
    first, second = node.get(keys[0], _MISSING), node.get(keys[1], _MISSING)
    if first is _MISSING:
        if second is _MISSING:
            if required:
                raise _node_error(i, None, f"missing {what} (expected key {keys[0]!r} or {keys[1]!r})")
            return []
        return second
    if second is not _MISSING and first != second:
        raise _node_error(i, node.get("function", node.get("type")), f"{keys[0]!r} and {keys[1]!r} disagree")
    return first


def normalize_program(program: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Rewrite a program's nodes (either spelling) as ``function``/``inputs``/``value_inputs``; shape checks only.

    >>> normalize_program([{"type": "scene", "inputs": []},
    ...                    {"type": "filter_color", "inputs": [0], "side_inputs": ["red"]}])
    [{'function': 'scene', 'inputs': [], 'value_inputs': []}, {'function': 'filter_color', 'inputs': [0], 'value_inputs': ['red']}]
    """
    if not isinstance(program, (list, tuple)) and (
        isinstance(program, (str, bytes, Mapping)) or not isinstance(program, Sequence)
    ):
        raise MalformedProgram(f"expected a list of program nodes, got {type(program).__name__}")
    normalized = []
    for i, node in enumerate(program):
        if not isinstance(node, (dict, Mapping)):
            raise _node_error(i, None, f"expected a JSON object, got {type(node).__name__}")
        function = _either(node, i, ("function", "type"), "the function name", required=True)
        if type(function) is not str:
            raise _node_error(i, None, f"function name must be a string, got {function!r}")
        inputs = node.get("inputs", _MISSING)
        if inputs is _MISSING:
            raise _node_error(i, function, "missing key 'inputs'")
        if type(inputs) is not list or any(type(j) is not int for j in inputs):
            raise _node_error(i, function, f"inputs must be a list of node indices, got {inputs!r}")
        values = _either(node, i, ("value_inputs", "side_inputs"), "value inputs", required=False)
        if type(values) is not list:
            raise _node_error(i, function, f"value inputs must be a list, got {values!r}")
        if values and not all(type(v) is str for v in values):
            # Integer values (choose's X) may arrive as JSON numbers.
            values = [str(v) if type(v) is int else v for v in values]
            if not all(isinstance(v, str) for v in values):
                raise _node_error(i, function, f"value inputs must be strings, got {values!r}")
        normalized.append({"function": function, "inputs": inputs[:], "value_inputs": values[:]})
    return normalized


class CompiledProgram:
    """A checked program: compile once, run on many scenes without the checks.

    >>> program = compile_program([{"function": "scene", "inputs": []},
    ...                            {"function": "exist", "inputs": [0]}])
    >>> program.output_types
    ('ObjectSet', 'Bool')
    """

    __slots__ = ("nodes", "output_types", "steps", "_pairs")

    def __init__(self, nodes, output_types, steps):
        self.nodes = nodes
        self.output_types = output_types
        self.steps = steps
        # Every function so far takes at most two inputs; spelling the inputs out as two
        # indices (-1 = absent) lets execute_raw build argument tuples without a loop,
        # which makes it about 40 % faster than a list comprehension per node.
        if all(len(inputs) <= 2 for _, inputs, _ in steps):
            self._pairs = tuple(
                (impl, inputs[0] if inputs else -1, inputs[1] if len(inputs) > 1 else -1, values)
                for impl, inputs, values in steps
            )
        else:
            self._pairs = None

    def __len__(self) -> int:
        return len(self.nodes)

    def __repr__(self) -> str:
        return f"CompiledProgram({' -> '.join(node['function'] for node in self.nodes)})"


_SIGNATURE_CACHE: dict[int, tuple[Metadata, int, dict[str, tuple]]] = {}


def _signatures(metadata: Metadata) -> dict[str, tuple]:
    """name -> (impl, input types, allowed values (None: integer), output); rebuilt on a change."""
    cached = _SIGNATURE_CACHE.get(id(metadata))
    if cached is not None and cached[0] is metadata and cached[1] == len(FUNCTIONS):
        return cached[2]
    table = {}
    for name, spec in metadata.functions.items():
        if spec.template_only or name not in FUNCTIONS:
            continue
        allowed = tuple(None if t == "Integer" else frozenset(metadata.values(t)) for t in spec.side_inputs)
        table[name] = (FUNCTIONS[name], spec.inputs, allowed, spec.output)
    _SIGNATURE_CACHE[id(metadata)] = (metadata, len(FUNCTIONS), table)
    return table


def _signature_error(metadata: Metadata, i: int, name: str) -> MalformedProgram:
    spec = metadata.functions.get(name)
    if spec is None:
        return _node_error(i, name, "unknown function")
    if spec.template_only:
        return _node_error(i, name, "template-only function; it must be expanded before execution")
    return _node_error(i, name, "declared in the metadata but has no implementation")


def compile_program(program, *, metadata: Metadata | None = None) -> CompiledProgram:
    """Normalize and check a program; raise :class:`MalformedProgram` naming node and function.

    >>> compile_program([{"type": "scene", "inputs": []}, {"type": "unique", "inputs": [0]},
    ...                  {"type": "query_color", "inputs": [1]}]).output_types
    ('ObjectSet', 'Object', 'Color')
    """
    if type(program) is CompiledProgram:
        return program
    metadata = metadata or default_metadata()
    table = _signatures(metadata)
    nodes = normalize_program(program)
    if not nodes:
        raise MalformedProgram("empty program")
    structure = tuple([(node["function"], tuple(node["inputs"])) for node in nodes])
    known = _STRUCTURES.get(structure)
    if known is not None and known[0] is table:
        compiled = _compile_known(nodes, known)
        if compiled is not None:
            return compiled
    compiled = _compile_checked(nodes, table, metadata)
    if len(_STRUCTURES) >= _MAX_STRUCTURES:
        _STRUCTURES.clear()  # bounded; a generator's few hundred structures come back at once
    _STRUCTURES[structure] = (table, compiled.output_types,
                              tuple([table[node["function"]][2] for node in nodes]),
                              tuple([impl for impl, _, _ in compiled.steps]))
    return compiled


# A program's shape (its functions, their inputs, the types flowing between them) is checked
# once per structure: a generator repeats a few hundred structures with ever new values, and
# the checks of the shape cost more than those of the values (checked each time).
_STRUCTURES: dict[tuple, tuple] = {}
_MAX_STRUCTURES = 4096


def _value_allowed(value: str, allowed: frozenset | None) -> bool:
    # allowed: the type's values, or None for an Integer (a literal)
    return _INTEGER_LITERAL.fullmatch(value) is not None if allowed is None else value in allowed


def _compile_known(nodes: list[dict], known: tuple) -> CompiledProgram | None:
    """A structure checked before: only its values are checked (None: the full check names the error)."""
    _, output_types, allowed, impls = known
    steps = []
    for node, ok_values, impl in zip(nodes, allowed, impls):
        values = node["value_inputs"]
        if len(values) != len(ok_values):
            return None
        for value, ok in zip(values, ok_values):
            if not _value_allowed(value, ok):
                return None
        steps.append((impl, tuple(node["inputs"]), tuple(values)))
    return CompiledProgram(tuple(nodes), output_types, tuple(steps))


def _compile_checked(nodes: list[dict], table: dict, metadata: Metadata) -> CompiledProgram:
    output_types: list[str] = []
    steps = []
    for i, node in enumerate(nodes):
        name, inputs, values = node["function"], node["inputs"], node["value_inputs"]
        signature = table.get(name)
        if signature is None:
            raise _signature_error(metadata, i, name)
        impl, input_types, allowed, output = signature
        if len(inputs) != len(input_types):
            raise _node_error(i, name, f"expected {len(input_types)} inputs, got {len(inputs)}")
        for k, j in enumerate(inputs):
            if not 0 <= j < i:
                raise _node_error(i, name, f"input {j} is not an earlier node")
            if output_types[j] != input_types[k]:
                raise _node_error(
                    i,
                    name,
                    f"input {k} (node {j}, {nodes[j]['function']}) gives {output_types[j]}, expected {input_types[k]}",
                )
        if len(values) != len(allowed):
            raise _node_error(i, name, f"expected {len(allowed)} value inputs, got {len(values)}")
        for k, value in enumerate(values):
            ok = allowed[k]
            if not _value_allowed(value, ok):
                type_name = metadata.functions[name].side_inputs[k]
                expected = "an integer" if ok is None else "one of " + ", ".join(metadata.values(type_name))
                raise _node_error(i, name, f"unknown {type_name} value {value!r} (expected {expected})")
        output_types.append(output)
        steps.append((impl, tuple(inputs), tuple(values)))
    return CompiledProgram(tuple(nodes), tuple(output_types), tuple(steps))


def execute_raw(program, index: SceneIndex) -> list[Any]:
    """Every node's raw output (ObjectSet as bitmask) on a :class:`SceneIndex`.

    For example::

        execute_raw(compile_program([{"function": "scene", "inputs": []}]), index)
        # -> [7]
    """
    if type(program) is not CompiledProgram:
        program = compile_program(program)
    outputs: list[Any] = []
    append = outputs.append
    try:
        if program._pairs is not None:
            for impl, a, b, values in program._pairs:
                if b >= 0:
                    append(impl(index, (outputs[a], outputs[b]), values))
                elif a >= 0:
                    append(impl(index, (outputs[a],), values))
                else:
                    append(impl(index, (), values))
        else:
            for impl, inputs, values in program.steps:
                append(impl(index, tuple([outputs[j] for j in inputs]), values))
    except InvalidProgram as exc:
        failed = len(outputs)
        exc.node, exc.function = failed, program.nodes[failed]["function"]
        raise
    return outputs


def public_value(raw: Any, type_name: str) -> Any:
    """Convert a raw output to its public form (an ObjectSet bitmask becomes sorted indices).

    >>> public_value(0b1010, "ObjectSet"), public_value(3, "Integer")
    ([1, 3], 3)
    """
    if type_name == "ObjectSet":
        return [i for i in range(raw.bit_length()) if raw >> i & 1]
    return raw


def answer_text(raw: Any) -> str:
    """Render an answer in the released CLEVR string form.

    >>> answer_text(True), answer_text(3), answer_text("metal")
    ('yes', '3', 'metal')
    """
    if raw is True:
        return "yes"
    if raw is False:
        return "no"
    return str(raw)


def _as_index(scene, metadata: Metadata | None) -> SceneIndex:
    return scene if isinstance(scene, SceneIndex) else SceneIndex(scene, metadata=metadata)


def execute(program, scene, *, metadata: Metadata | None = None) -> list[Any]:
    """Every node's output in public form (ObjectSet as sorted indices) on a scene or :class:`SceneIndex`.

    For example::

        execute([{"function": "scene", "inputs": [], "value_inputs": []},
                 {"function": "filter_color", "inputs": [0], "value_inputs": ["red"]},
                 {"function": "count", "inputs": [1], "value_inputs": []}], scene)
        # -> [[0, 1, 2], [0, 2], 2]
    """
    compiled = compile_program(program, metadata=metadata)
    raw = execute_raw(compiled, _as_index(scene, metadata))
    return [public_value(value, type_name) for value, type_name in zip(raw, compiled.output_types)]


def answer(program, scene, *, metadata: Metadata | None = None) -> str:
    """The program's answer on a scene as the released CLEVR string (``"yes"``, ``"3"``, ``"metal"``).

    For example::

        answer([{"type": "scene", "inputs": []}, {"type": "exist", "inputs": [0]}], scene)
        # -> 'yes'
    """
    compiled = compile_program(program, metadata=metadata)
    last = len(compiled) - 1
    if compiled.output_types[last] in _NON_ANSWER_TYPES:
        raise _node_error(
            last, compiled.nodes[last]["function"], f"the last node gives an {compiled.output_types[last]}, not an answer"
        )
    return answer_text(execute_raw(compiled, _as_index(scene, metadata))[last])
