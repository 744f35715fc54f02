"""Executor throughput on real CLEVR scenes, a correctness check of hand-built programs against
the scene graphs, and load_scenes time / peak memory on a CLEVR-train-sized file.

    .venv/bin/python benchmarks/bench_executor.py                      # everything
    .venv/bin/python benchmarks/bench_executor.py --skip-load          # executor only
    .venv/bin/python benchmarks/bench_executor.py --scenes PATH --synthetic-scenes 70000

Programs follow the CLEVR question families (zero_hop count/exist/query, one/two/three-hop
relate chains, same_relate, comparison, compare_integer, single_and, single_or) plus the
CLEVR-Math subtraction/addition/choose programs. Each is built from one scene with plain list
operations over the scene graph, which also give its expected answer; the executor must agree
on every program before anything is timed.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from builder_utils.atomic import atomic_output
from builder_utils.clevr import SceneIndex, answer, compile_program, execute, execute_raw, load_scenes

DEFAULT_SCENES = Path(__file__).resolve().parents[2] / "shared" / "data" / "clevr" / "CLEVR_val_scenes_100.json"
ATTRS = ("size", "color", "material", "shape")
RELATIONS = ("left", "right", "behind", "front")


# -- programs built from the scene graph, with their expected answers -------------------------


class Builder:
    """Appends nodes in the released spelling and tracks, in plain lists, what each node is."""

    def __init__(self, scene: dict):
        self.scene = scene
        self.objects = scene["objects"]
        self.nodes: list[dict] = []

    def add(self, function: str, inputs=(), values=()) -> int:
        self.nodes.append({"function": function, "inputs": list(inputs), "value_inputs": list(values)})
        return len(self.nodes) - 1

    def filters(self, source: int, pairs) -> int:
        for attr, value in pairs:
            source = self.add(f"filter_{attr}", [source], [value])
        return source

    def describe(self, candidates: list[int], target: int, rng: random.Random):
        """A shortest attribute description selecting exactly ``target`` among ``candidates``."""
        obj = self.objects[target]
        for size in range(0, 5):
            combos = list(itertools.combinations(ATTRS, size))
            rng.shuffle(combos)
            for combo in combos:
                match = [i for i in candidates if all(self.objects[i][a] == obj[a] for a in combo)]
                if match == [target]:
                    return [(a, obj[a]) for a in combo]
        return None

    def unique(self, source: int, candidates: list[int], target: int, rng) -> int | None:
        description = self.describe(candidates, target, rng)
        if description is None:
            return None
        return self.add("unique", [self.filters(source, description)])

    def related(self, i: int, rel: str) -> list[int]:
        return list(self.scene["relationships"][rel][i])


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def _random_filter(objects, rng):
    obj = rng.choice(objects)
    attrs = rng.sample(ATTRS, rng.choice((1, 1, 2)))
    return [(a, obj[a]) for a in attrs]


def _matching(objects, members, pairs):
    return [i for i in members if all(objects[i][a] == v for a, v in pairs)]


def _hop_programs(scene: dict, rng: random.Random):
    """one_hop .. three_hop: follow relations from a uniquely described object."""
    objs = scene["objects"]
    everyone = list(range(len(objs)))
    for hops in (1, 2, 3):
        b = Builder(scene)
        current = rng.choice(everyone)
        node = b.unique(b.add("scene"), everyone, current, rng)
        ok = node is not None
        for hop in range(hops):
            if not ok:
                break
            rel = rng.choice(RELATIONS)
            members = b.related(current, rel)
            rel_node = b.add("relate", [node], [rel])
            if hop == hops - 1:
                ending = rng.choice(("count", "exist", "query"))
                if ending != "query" or not members:
                    pairs = _random_filter(objs, rng) if rng.random() < 0.7 else []
                    found = _matching(objs, members, pairs)
                    b.add(ending if ending != "query" else "count", [b.filters(rel_node, pairs)])
                    expected = str(len(found)) if ending != "exist" else _yes(bool(found))
                else:
                    nxt = rng.choice(members)
                    node = b.unique(rel_node, members, nxt, rng)
                    if node is None:
                        ok = False
                        break
                    attr = rng.choice(ATTRS)
                    b.add(f"query_{attr}", [node])
                    expected = objs[nxt][attr]
            else:
                if not members:
                    ok = False
                    break
                nxt = rng.choice(members)
                node = b.unique(rel_node, members, nxt, rng)
                if node is None:
                    ok = False
                    break
                current = nxt
        if ok:
            yield f"{hops}_hop", b.nodes, expected


def family_programs(scene: dict, rng: random.Random):
    """Yield (family, program, expected answer) for one scene."""
    objs = scene["objects"]
    everyone = list(range(len(objs)))

    # zero_hop: count / exist / query
    b = Builder(scene)
    pairs = _random_filter(objs, rng)
    b.add("count", [b.filters(b.add("scene"), pairs)])
    yield "zero_hop count", b.nodes, str(len(_matching(objs, everyone, pairs)))

    b = Builder(scene)
    pairs = [(a, rng.choice(v)) for a, v in zip(ATTRS, (("small", "large"), ("red", "cyan", "gray"), ("rubber", "metal"), ("cube", "sphere")))]
    pairs = rng.sample(pairs, 2)
    b.add("exist", [b.filters(b.add("scene"), pairs)])
    yield "zero_hop exist", b.nodes, _yes(bool(_matching(objs, everyone, pairs)))

    target = rng.choice(everyone)
    b = Builder(scene)
    obj_node = b.unique(b.add("scene"), everyone, target, rng)
    if obj_node is not None:
        attr = rng.choice(ATTRS)
        b.add(f"query_{attr}", [obj_node])
        yield "zero_hop query", b.nodes, objs[target][attr]

    yield from _hop_programs(scene, rng)

    # same_relate: things sharing an attribute with a unique object
    target = rng.choice(everyone)
    b = Builder(scene)
    node = b.unique(b.add("scene"), everyone, target, rng)
    if node is not None:
        attr = rng.choice(ATTRS)
        same = [j for j in everyone if j != target and objs[j][attr] == objs[target][attr]]
        b.add("count", [b.add(f"same_{attr}", [node])])
        yield "same_relate", b.nodes, str(len(same))

    # comparison: do two objects share an attribute?
    a, c = rng.sample(everyone, 2)
    b = Builder(scene)
    na = b.unique(b.add("scene"), everyone, a, rng)
    nc = b.unique(0, everyone, c, rng) if na is not None else None
    if nc is not None:
        attr = rng.choice(ATTRS)
        b.add(f"equal_{attr}", [b.add(f"query_{attr}", [na]), b.add(f"query_{attr}", [nc])])
        yield "comparison", b.nodes, _yes(objs[a][attr] == objs[c][attr])

    # compare_integer: counts of two groups
    p1, p2 = _random_filter(objs, rng), _random_filter(objs, rng)
    op = rng.choice(("equal_integer", "less_than", "greater_than"))
    b = Builder(scene)
    s = b.add("scene")
    n1, n2 = len(_matching(objs, everyone, p1)), len(_matching(objs, everyone, p2))
    b.add(op, [b.add("count", [b.filters(s, p1)]), b.add("count", [b.filters(s, p2)])])
    yield "compare_integer", b.nodes, _yes({"equal_integer": n1 == n2, "less_than": n1 < n2, "greater_than": n1 > n2}[op])

    # single_and / single_or
    a, c = rng.sample(everyone, 2)
    r1, r2 = rng.choice(RELATIONS), rng.choice(RELATIONS)
    b = Builder(scene)
    na = b.unique(b.add("scene"), everyone, a, rng)
    nc = b.unique(0, everyone, c, rng) if na is not None else None
    if nc is not None:
        both = sorted(set(b.related(a, r1)) & set(b.related(c, r2)))
        pairs = _random_filter(objs, rng) if rng.random() < 0.5 else []
        inter = b.add("intersect", [b.add("relate", [na], [r1]), b.add("relate", [nc], [r2])])
        b.add("count", [b.filters(inter, pairs)])
        yield "single_and", b.nodes, str(len(_matching(objs, both, pairs)))
    p1, p2 = _random_filter(objs, rng), _random_filter(objs, rng)
    b = Builder(scene)
    s = b.add("scene")
    either = set(_matching(objs, everyone, p1)) | set(_matching(objs, everyone, p2))
    b.add("count", [b.add("union", [b.filters(s, p1), b.filters(s, p2)])])
    yield "single_or", b.nodes, str(len(either))

    # CLEVR-Math: "Subtract all <C> <S>s. How many <S>s are left?" and "Subtract X <S>s ..."
    obj = rng.choice(objs)
    b = Builder(scene)
    s = b.add("scene")
    shapes = b.filters(s, [("shape", obj["shape"])])
    removed = b.filters(shapes, [("color", obj["color"])])
    b.add("subtraction", [b.add("count", [shapes]), b.add("count", [removed])])
    n_shape = len(_matching(objs, everyone, [("shape", obj["shape"])]))
    n_removed = len(_matching(objs, everyone, [("shape", obj["shape"]), ("color", obj["color"])]))
    yield "math subtraction", b.nodes, str(n_shape - n_removed)
    x = rng.randint(1, n_shape)
    b = Builder(scene)
    s = b.add("scene")
    shapes = b.filters(s, [("shape", obj["shape"])])
    op = rng.choice(("subtraction", "addition"))
    b.add(op, [b.add("count", [shapes]), b.add("choose", [shapes], [str(x)])])
    yield "math choose", b.nodes, str(n_shape - x if op == "subtraction" else n_shape + x)


# Read off CLEVR_val_000000 by hand: 0 large brown rubber cylinder, 1 large gray rubber cube,
# 2 small green rubber cylinder, 3 large purple metal sphere, 4 small gray metal cube;
# relationships.left[1] = [0, 2], behind[2] = [3], front[3] = [0, 1, 2, 4].
def _n(function, inputs=(), *values):
    return {"function": function, "inputs": list(inputs), "value_inputs": list(values)}


HAND_CHECKED_SCENE_0 = [
    ([_n("scene"), _n("filter_size", [0], "large"), _n("count", [1])], "3"),
    ([_n("scene"), _n("filter_material", [0], "metal"), _n("filter_shape", [1], "cube"), _n("unique", [2]),
      _n("query_color", [3])], "gray"),
    ([_n("scene"), _n("filter_size", [0], "large"), _n("filter_shape", [1], "cube"), _n("unique", [2]),
      _n("relate", [3], "left"), _n("count", [4])], "2"),
    ([_n("scene"), _n("filter_color", [0], "green"), _n("unique", [1]), _n("relate", [2], "behind"),
      _n("unique", [3]), _n("query_material", [4])], "metal"),
    ([_n("scene"), _n("filter_shape", [0], "sphere"), _n("unique", [1]), _n("relate", [2], "front"),
      _n("filter_color", [3], "gray"), _n("count", [4])], "2"),
    ([_n("scene"), _n("filter_color", [0], "gray"), _n("count", [1]), _n("filter_shape", [0], "cylinder"),
      _n("count", [3]), _n("equal_integer", [2, 4])], "yes"),
    ([_n("scene"), _n("filter_shape", [0], "sphere"), _n("unique", [1]), _n("same_size", [2]),
      _n("count", [3])], "2"),
    ([_n("scene"), _n("filter_shape", [0], "cube"), _n("count", [1]), _n("filter_shape", [0], "cube"),
      _n("filter_color", [3], "gray"), _n("count", [4]), _n("subtraction", [2, 5])], "0"),
]


def check(scenes: list[dict], programs) -> int:
    scene0 = scenes[0]
    assert scene0["image_filename"] == "CLEVR_val_000000.png", "hand-checked programs expect CLEVR_val_000000"
    for nodes, expected in HAND_CHECKED_SCENE_0:
        got = answer(nodes, scene0)
        assert got == expected, (nodes, got, expected)
    for scene_number, family, nodes, expected in programs:
        got = answer(nodes, scenes[scene_number])
        assert got == expected, (scenes[scene_number]["image_filename"], family, nodes, got, expected)
    return len(HAND_CHECKED_SCENE_0) + len(programs)


# -- timing -----------------------------------------------------------------------------------


def best_rate(run, count: int, repeats: int = 5) -> float:
    """Items per CPU second, best of ``repeats`` (CPU time: the machine is shared)."""
    best = float("inf")
    for _ in range(repeats):
        start = time.process_time()
        run()
        best = min(best, time.process_time() - start)
    return count / best


def bench_executor(scenes: list[dict], programs) -> dict:
    indexes = [SceneIndex(scene, validate=False) for scene in scenes]
    compiled = [(indexes[k], compile_program(nodes)) for k, _, nodes, _ in programs]
    as_dicts = [(scenes[k], nodes) for k, _, nodes, _ in programs]
    with_index = [(indexes[k], nodes) for k, _, nodes, _ in programs]
    n = len(programs)
    nodes_total = sum(len(nodes) for _, _, nodes, _ in programs)

    def raw():
        for index, program in compiled:
            execute_raw(program, index)

    def public_with_index():
        for index, nodes in with_index:
            execute(nodes, index)

    def public_with_dict():
        for scene, nodes in as_dicts:
            execute(nodes, scene)

    def compile_only():
        for _, nodes in as_dicts:
            compile_program(nodes)

    def build_indexes():
        for scene in scenes:
            SceneIndex(scene, validate=False)

    def build_validated_indexes():
        for scene in scenes:
            SceneIndex(scene)

    raw_rate = best_rate(raw, n, repeats=7)
    return {
        "programs": n,
        "mean_nodes": nodes_total / n,
        "raw_programs_per_s": raw_rate,
        "raw_nodes_per_s": raw_rate * nodes_total / n,
        "execute_with_index_per_s": best_rate(public_with_index, n),
        "execute_with_dict_per_s": best_rate(public_with_dict, n),
        "compile_per_s": best_rate(compile_only, n),
        "index_build_per_s": best_rate(build_indexes, len(scenes)),
        "validated_index_build_per_s": best_rate(build_validated_indexes, len(scenes)),
    }


# -- load_scenes on a CLEVR-train-sized file --------------------------------------------------

_LOAD_CHILD = r"""
import json, pickle, sys, time
path, mode = sys.argv[1], sys.argv[2]
start, cpu_start = time.perf_counter(), time.process_time()
if mode == "load_scenes":
    from builder_utils.clevr import load_scenes
    scenes = load_scenes(path)
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    extra = {"pickle_bytes": len(pickle.dumps(scenes))}
    t = time.perf_counter(); window = scenes.window(len(scenes) // 2, len(scenes) // 2 + 1000)
    extra["window_1000_s"] = time.perf_counter() - t
    t = time.perf_counter(); count = sum(1 for _ in scenes)
    extra["iterate_all_s"] = time.perf_counter() - t
elif mode == "json_load":
    with open(path, "rb") as fh:
        scenes = json.load(fh)["scenes"]
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    extra = {}
else:
    import builder_utils.clevr
    elapsed, cpu, extra = 0.0, 0.0, {}
# VmHWM (peak resident set of this process image); ru_maxrss would include the parent's
# resident set inherited through fork.
with open("/proc/self/status") as fh:
    peak_kib = next(int(line.split()[1]) for line in fh if line.startswith("VmHWM:"))
print(json.dumps({"seconds": elapsed, "cpu_seconds": cpu, "peak_rss_mib": peak_kib / 1024, **extra}))
"""


def write_synthetic(real_scenes: list[dict], info: dict, count: int, path: Path) -> None:
    """A CLEVR-train-sized scene file: the real scenes repeated, renumbered (atomic write)."""
    with atomic_output(path) as fh:
        fh.write('{"info": ' + json.dumps(info) + ', "scenes": [')
        for k in range(count):
            scene = dict(real_scenes[k % len(real_scenes)], image_index=k, image_filename=f"CLEVR_train_{k:06d}.png")
            fh.write((", " if k else "") + json.dumps(scene))
        fh.write("]}")


def bench_load(real_scenes, info, count: int) -> dict:
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"CLEVR_synthetic_{count}_scenes.json"
        write_synthetic(real_scenes, info, count, path)
        results["file_mib"] = path.stat().st_size / 2**20
        for mode in ("baseline", "load_scenes", "json_load"):
            out = subprocess.run(
                [sys.executable, "-c", _LOAD_CHILD, str(path), mode], check=True, capture_output=True, text=True
            ).stdout
            results[mode] = json.loads(out)
    return results


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenes", type=Path, default=DEFAULT_SCENES, help="real CLEVR scene file")
    parser.add_argument("--rounds", type=int, default=20, help="rounds of the family mix per scene")
    parser.add_argument("--synthetic-scenes", type=int, default=70_000)
    parser.add_argument("--skip-load", action="store_true", help="skip the load_scenes measurement")
    args = parser.parse_args(argv)

    scene_file = load_scenes(args.scenes)
    scenes = list(scene_file)
    rng = random.Random(0)
    programs = [
        (k, family, nodes, expected)
        for k, scene in enumerate(scenes)
        for _ in range(args.rounds)
        for family, nodes, expected in family_programs(scene, rng)
    ]
    checked = check(scenes, programs)
    families = sorted({family for _, family, _, _ in programs})
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    print(f"checked {checked} programs on {len(scenes)} real scenes against the scene graphs: all agree")
    print(f"families: {', '.join(families)}")

    r = bench_executor(scenes, programs)
    print(f"\nexecutor, {r['programs']} programs, {r['mean_nodes']:.1f} nodes on average (CPU time, best of 5-7 runs):")
    print(f"  execute_raw(compiled, SceneIndex)   {r['raw_programs_per_s']:>12,.0f} programs/s  ({r['raw_nodes_per_s']:,.0f} nodes/s)")
    print(f"  execute(program dicts, SceneIndex)  {r['execute_with_index_per_s']:>12,.0f} programs/s")
    print(f"  execute(program dicts, scene dict)  {r['execute_with_dict_per_s']:>12,.0f} programs/s")
    print(f"  compile_program                     {r['compile_per_s']:>12,.0f} programs/s")
    print(f"  SceneIndex(scene, validate=False)   {r['index_build_per_s']:>12,.0f} scenes/s")
    print(f"  SceneIndex(scene) with validation   {r['validated_index_build_per_s']:>12,.0f} scenes/s")

    if not args.skip_load:
        res = bench_load(scenes, scene_file.info, args.synthetic_scenes)
        base = res["baseline"]["peak_rss_mib"]
        ls, jl = res["load_scenes"], res["json_load"]
        print(f"\nload_scenes on {args.synthetic_scenes:,} scenes ({res['file_mib']:.0f} MiB, the real scenes repeated):")
        print(f"  load_scenes: {ls['seconds']:.1f} s wall, {ls['cpu_seconds']:.1f} s CPU, peak RSS {ls['peak_rss_mib']:.0f} MiB"
              f" (interpreter + imports alone: {base:.0f} MiB)")
        print(f"  json.load:   {jl['seconds']:.1f} s wall, {jl['cpu_seconds']:.1f} s CPU, peak RSS {jl['peak_rss_mib']:.0f} MiB")
        print(f"  pickled SceneFile: {ls['pickle_bytes'] / 2**20:.2f} MiB; window of 1,000 scenes: {ls['window_1000_s'] * 1000:.0f} ms;"
              f" iterating all scenes: {ls['iterate_all_s']:.1f} s")


if __name__ == "__main__":
    main()
