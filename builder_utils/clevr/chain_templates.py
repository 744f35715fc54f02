"""Write the ``clevr_math_chains`` template set: chains of k operations, k = 2..max.

The paper's future work as ordinary template files (usage: README, "CLEVR-Math template sets").
What keeps every step exact with CLEVR's counting functions:
- Pairwise different colours (``NEQ``): groups never overlap, each counts as in the scene.
- A removal takes at least one object (``OUT_RANGE`` min 1; min 2 for "<X> of the <C> <S>s").
- An insertion adds 1..min(N, 3) (``--max-insert``): uncapped, chains drift upwards (a removal
  takes one or two on average) and answers pile up at the top of 0..10. Its filter only
  describes the new objects: no arithmetic reads it.
- The i-th arithmetic node is the count after operation i (``intermediate_counts``).
Nothing is written inside the installed package (its files are every command's input): write
elsewhere and copy the ``chain_*.json`` over the shipped set; ``--check`` compares.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Sequence

from builder_utils.command import CommandParser
from builder_utils.options import Integer
from builder_utils.ownership import OVERWRITE_HELP, OutputFolder

COMMAND = "chain_templates"
DEFAULT_MAX_OPERATIONS = 5
MIN_OPERATIONS = 2
DEFAULT_MAX_INSERT = 3
# Colours must be pairwise different, and CLEVR has eight of them.
MAX_OPERATIONS = 8
CATEGORY = "multihop"
DEFAULT_OUTPUT_DIR = Path(__file__).resolve().parent / "templates" / "clevr_math_chains"
# The stream's set (clevr_math.stream): alternating and same-sign chains of 2..MAX_OPERATIONS.
LONG_CHAINS_DIR = Path(__file__).resolve().parent / "templates" / "clevr_math_long_chains"
SAME_SIGN_FAMILY = "same_sign"

REMOVE_ALL = "remove_all"
REMOVE_SOME = "remove_some"
ADD = "add"

# More inserted objects than any scene holds (CLEVR's 10, the synthetic worlds' 14) is a mistake, not
# a larger template (the synthetic package is not imported here: it depends on this one's).
MAX_INSERT = 32


def operation_sequence(num_operations: int, start: str, first_removal: str) -> list[str]:
    """The operations of one chain: removal and insertion alternate, and so do the removal forms.

    >>> operation_sequence(4, "remove", REMOVE_ALL)
    ['remove_all', 'add', 'remove_some', 'add']
    >>> operation_sequence(3, "add", REMOVE_SOME)
    ['add', 'remove_some', 'add']
    """
    if start not in ("remove", "add"):
        raise ValueError(f"start must be 'remove' or 'add', got {start!r}")
    if first_removal not in (REMOVE_ALL, REMOVE_SOME):
        raise ValueError(f"first_removal must be {REMOVE_ALL!r} or {REMOVE_SOME!r}, got {first_removal!r}")
    other_removal = REMOVE_SOME if first_removal == REMOVE_ALL else REMOVE_ALL
    ops: list[str] = []
    removals = 0
    for i in range(num_operations):
        is_removal = (i % 2 == 0) == (start == "remove")
        if is_removal:
            ops.append(first_removal if removals % 2 == 0 else other_removal)
            removals += 1
        else:
            ops.append(ADD)
    return ops


def same_sign_sequence(num_operations: int, sign: str, first_removal: str = REMOVE_ALL) -> list[str]:
    """The operations of a chain that only removes (the removal forms alternate) or only adds.

    >>> same_sign_sequence(3, "remove", REMOVE_SOME)
    ['remove_some', 'remove_all', 'remove_some']
    >>> same_sign_sequence(2, "add")
    ['add', 'add']
    """
    if sign == "add":
        return [ADD] * num_operations
    if sign != "remove":
        raise ValueError(f"sign must be 'remove' or 'add', got {sign!r}")
    other = REMOVE_SOME if first_removal == REMOVE_ALL else REMOVE_ALL
    return [first_removal if i % 2 == 0 else other for i in range(num_operations)]


def _clause(op: str, i: int, verb_slot: str) -> str:
    group = f"<C{i}> <S{i}>s"
    if op == REMOVE_ALL:
        return f"{{{verb_slot}}} all {group}"
    if op == REMOVE_SOME:
        return f"{{{verb_slot}}} <X{i}> of the {group}"
    return f"{{{verb_slot}}} <X{i}> {group}"


def _slot(op: str, capital: bool) -> str:
    verb = "Add" if op == ADD else "Remove"
    return verb if capital else verb.lower()


def _texts(ops: Sequence[str]) -> list[str]:
    n = range(1, len(ops) + 1)
    sentences = " ".join(_clause(op, i, _slot(op, True)) + "." for op, i in zip(ops, n))
    then = " ".join(
        (_clause(op, i, _slot(op, True)) if i == 1 else "Then " + _clause(op, i, _slot(op, False))) + "."
        for op, i in zip(ops, n)
    )
    one_sentence = ", then ".join(
        _clause(op, i, _slot(op, i == 1)) for op, i in zip(ops, n)
    ) + "."
    return [
        f"{sentences} How many objects are there now?",
        f"{then} How many objects are left?",
        f"{one_sentence} How many objects remain?",
    ]


def chain_template(ops: Sequence[str], max_insert: int | None = DEFAULT_MAX_INSERT) -> dict:
    """One chain template for a sequence of operations (see :func:`operation_sequence`).

    >>> t = chain_template(["remove_all", "add"])
    >>> t["text"][0]
    '{Remove} all <C1> <S1>s. {Add} <X2> <C2> <S2>s. How many objects are there now?'
    >>> [n["type"] for n in t["nodes"]]
    ['scene', 'count', 'filter', 'count', 'subtraction', 'filter', 'choose', 'addition']
    """
    if not MIN_OPERATIONS <= len(ops) <= MAX_OPERATIONS:
        raise ValueError(f"a chain has {MIN_OPERATIONS} to {MAX_OPERATIONS} operations, got {len(ops)}")
    params: list[dict] = []
    nodes: list[dict] = [{"type": "scene", "inputs": []}, {"type": "count", "inputs": [0]}]
    constraints: list[dict] = []
    state = 1
    for i, op in enumerate(ops, start=1):
        params += [{"type": "Color", "name": f"<C{i}>"}, {"type": "Shape", "name": f"<S{i}>"}]
        nodes.append({"type": "filter", "inputs": [0], "side_inputs": [f"<C{i}>", f"<S{i}>"]})
        group = len(nodes) - 1
        if op == REMOVE_ALL:
            nodes.append({"type": "count", "inputs": [group]})
            constraints.append({"type": "OUT_RANGE", "node": group, "min": 1})
        else:
            params.append({"type": "Integer", "name": f"<X{i}>"})
            if op == REMOVE_SOME:
                # "<X> of the <C> <S>s" reads as a choice only from a group of two or more.
                constraints.append({"type": "OUT_RANGE", "node": group, "min": 2})
            source = group if op == REMOVE_SOME else 0
            nodes.append({"type": "choose", "inputs": [source], "side_inputs": [f"<X{i}>"]})
            if op == ADD and max_insert is not None:
                constraints.append({"type": "OUT_RANGE", "node": len(nodes) - 1, "max": max_insert})
        amount = len(nodes) - 1
        nodes.append({"type": "addition" if op == ADD else "subtraction", "inputs": [state, amount]})
        state = len(nodes) - 1
    names = [f"<C{i}>" for i in range(1, len(ops) + 1)]
    # A removal may name only a colour ("all red things"); new objects always have a shape.
    shapes = [f"<S{i}>" for i, op in enumerate(ops, start=1) if op == ADD]
    constraints.insert(0, {"type": "NOT_NULL", "params": names + shapes})
    for a in range(len(names)):
        for b in range(a + 1, len(names)):
            constraints.append({"type": "NEQ", "params": [names[a], names[b]]})
    return {"category": CATEGORY, "params": params, "text": _texts(ops), "nodes": nodes, "constraints": constraints}


def chain_templates(num_operations: int, max_insert: int | None = DEFAULT_MAX_INSERT) -> list[dict]:
    """The four templates of chains with ``num_operations`` operations.

    >>> len(chain_templates(3))
    4
    """
    return [
        chain_template(operation_sequence(num_operations, start, first_removal), max_insert)
        for start in ("remove", "add")
        for first_removal in (REMOVE_ALL, REMOVE_SOME)
    ]


def same_sign_templates(num_operations: int, max_insert: int | None = DEFAULT_MAX_INSERT) -> list[dict]:
    """The three same-sign chains of one length: removals only (either form first), insertions only.

    >>> [t["text"][0] for t in same_sign_templates(2)][2]
    '{Add} <X1> <C1> <S1>s. {Add} <X2> <C2> <S2>s. How many objects are there now?'
    """
    return [
        chain_template(same_sign_sequence(num_operations, "remove", REMOVE_ALL), max_insert),
        chain_template(same_sign_sequence(num_operations, "remove", REMOVE_SOME), max_insert),
        chain_template(same_sign_sequence(num_operations, "add"), max_insert),
    ]


def long_chain_files(max_operations: int = MAX_OPERATIONS, max_insert: int | None = DEFAULT_MAX_INSERT) -> dict[str, str]:
    """File name -> JSON text of the stream's set: :func:`chain_files` plus ``same_sign_k.json``.

    >>> sorted(long_chain_files(2))
    ['chain_2.json', 'same_sign_2.json']
    """
    files = chain_files(max_operations, max_insert)
    files |= {f"{SAME_SIGN_FAMILY}_{k}.json": render(same_sign_templates(k, max_insert))
              for k in range(MIN_OPERATIONS, max_operations + 1)}
    return files


def file_name(num_operations: int) -> str:
    """The file (and so the family) holding the chains of one length.

    >>> file_name(3)
    'chain_3.json'
    """
    return f"chain_{num_operations}.json"


def render(templates: list[dict]) -> str:
    """Stable JSON text of a template file: one template per block, one node per line."""
    blocks = []
    for t in templates:
        fields = [f'    "category": {json.dumps(t["category"])}']
        for key in ("params", "text", "nodes", "constraints"):
            items = ",\n".join(f"      {json.dumps(item)}" for item in t[key])
            fields.append(f'    "{key}": [\n{items}\n    ]')
        blocks.append("  {\n" + ",\n".join(fields) + "\n  }")
    return "[\n" + ",\n".join(blocks) + "\n]\n"


def chain_files(max_operations: int = DEFAULT_MAX_OPERATIONS, max_insert: int | None = DEFAULT_MAX_INSERT) -> dict[str, str]:
    """File name -> JSON text for chains of 2..``max_operations`` operations.

    >>> sorted(chain_files(3))
    ['chain_2.json', 'chain_3.json']
    """
    if not MIN_OPERATIONS <= max_operations <= MAX_OPERATIONS:
        raise ValueError(
            f"max_operations must be in {MIN_OPERATIONS}..{MAX_OPERATIONS} "
            f"(each operation needs its own colour), got {max_operations}"
        )
    if max_insert is not None and max_insert < 1:
        raise ValueError(f"max_insert must be at least 1 (or None for no cap), got {max_insert}")
    return {file_name(k): render(chain_templates(k, max_insert)) for k in range(MIN_OPERATIONS, max_operations + 1)}


def write_chain_set(
    output_dir: str | os.PathLike,
    max_operations: int = DEFAULT_MAX_OPERATIONS,
    max_insert: int | None = DEFAULT_MAX_INSERT,
) -> list[Path]:
    """Write the chain files into ``output_dir``; stale longer ``chain_*.json`` of ours are removed.

    >>> import tempfile
    >>> [p.name for p in write_chain_set(tempfile.mkdtemp(), 2)]
    ['chain_2.json']
    """
    return _write_files(Path(output_dir), chain_files(max_operations, max_insert))


def _write_files(out: Path, files: dict[str, str], overwrite: bool = False) -> list[Path]:
    """Write ``files`` into ``out``, removing the chain files the folder's record says we wrote."""
    with OutputFolder.open(out, command=COMMAND, flag="--output-dir", overwrite=overwrite) as folder:
        for name, text in files.items():
            (folder.stage / name).write_text(text, encoding="utf-8")
        folder.add(list(files), remove=[path for path, entry in folder.record.items() if entry.command == COMMAND])
    return [out / name for name in files]


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: write (or with ``--check`` compare) the chain template set."""
    parser = CommandParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--max-operations", type=Integer(MIN_OPERATIONS, maximum=MAX_OPERATIONS).parse, default=DEFAULT_MAX_OPERATIONS,
                        help=f"longest chain, {MIN_OPERATIONS}..{MAX_OPERATIONS} (default {DEFAULT_MAX_OPERATIONS})")
    parser.add_argument("--max-insert", type=Integer(0, maximum=MAX_INSERT).parse, default=DEFAULT_MAX_INSERT,
                        help=f"most objects one insertion adds (default {DEFAULT_MAX_INSERT}; 0 = up to the "
                             "scene's object count)")
    parser.add_argument("--output-dir", default=None,
                        help="folder to write (default: the shipped clevr_math_chains set, or with --long "
                             "clevr_math_long_chains)")
    parser.add_argument("--long", action="store_true",
                        help=f"write the stream's set: alternating and same-sign chains of {MIN_OPERATIONS}.."
                             f"{MAX_OPERATIONS} operations (default folder: {LONG_CHAINS_DIR.name})")
    parser.add_argument("--overwrite", action="store_true", help=OVERWRITE_HELP)
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 if the folder differs from what would be written")
    args = parser.parse_args(argv)
    if args.long and args.max_operations == DEFAULT_MAX_OPERATIONS:
        args.max_operations = MAX_OPERATIONS
    try:
        write = long_chain_files if args.long else chain_files
        files = write(args.max_operations, args.max_insert or None)
    except ValueError as exc:
        parser.error(str(exc))
    out = Path(args.output_dir or (LONG_CHAINS_DIR if args.long else DEFAULT_OUTPUT_DIR))
    if args.check:
        present = {p.name: p.read_text(encoding="utf-8") for pattern in ("chain_*.json", f"{SAME_SIGN_FAMILY}_*.json")
                   for p in out.glob(pattern)}
        if present != files:
            print(f"{out}: chain templates are out of date; rerun python -m {__spec__.name if __spec__ else __name__}",
                  file=sys.stderr)
            return 1
        return 0
    try:
        written = _write_files(out, files, args.overwrite)
    except (OSError, ValueError) as exc:
        print(f"{parser.prog}: error: {exc}", file=sys.stderr)
        return 2
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
