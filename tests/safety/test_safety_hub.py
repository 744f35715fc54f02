"""Safety table of the Hub export and push (`clotho-aqa export`, `clotho-aqa push`): issue 12
items 2, 3, 4 and 13, its export/push "should fix" errors, and the resumable push of issue 11.

Every row starts from the same situation, copied into ``tmp_path``: ``release/`` (a synthetic
Clotho-AQA release, 5 clips of 1 s) and ``E/`` (configuration ``all`` exported from it in
200 KB shards, so a re-export with the default shard size leaves stale shards). Clotho-AQA
stands for both datasets: export and push are the same shared code for CLEVR-Math.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import textwrap
from pathlib import Path

import pytest
from safety_harness import Case, WaitPoint, run_case, script, start, wait_until

from builder_utils.ownership import MARKER, RECORD, read_record, sha256_of

MANIFEST = RECORD


def read_manifest(folder):
    return read_record(folder)[0]


def _write_record(folder: Path, paths: dict) -> None:
    """A record listing ``paths`` (recorded path -> the file whose size and sha256 it claims)."""
    files = [{"path": rel, "size": real.stat().st_size, "sha256": sha256_of(real), "command": "export", "group": "all"}
             for rel, real in paths.items()]
    (folder / RECORD).write_text(json.dumps({"format": "builder-utils-ownership", "version": 1, "files": files}))


def export(out: str = "E", *extra: str) -> list[str]:
    return ["clotho-aqa", "export", "--data_dir", "release", "--out", out, "--quiet", *extra]


def push(folder: str = "E", *extra: str) -> list[str]:
    return ["clotho-aqa", "push", "--folder", folder, "--repo_id", "me/clotho-aqa", "--dry_run", *extra]


def _shards(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.glob("all/*.parquet"))


def _manifest_matches_folder(tmp: Path) -> None:
    """Every file of the manifest exists with its size; every shard on disk is in the manifest."""
    records = read_manifest(tmp / "E")
    for path, record in records.items():
        assert (tmp / "E" / path).stat().st_size == record.size, path
    assert set(_shards(tmp / "E")) <= set(records)


# -- item 2: export keeps what it did not write ---------------------------------------------


def _user_files_in_our_folders(tmp: Path) -> list[str]:
    (tmp / "E" / "all" / "notes.md").write_text("my notes on the all config")
    (tmp / "E" / "assets" / "my-plot.png").write_bytes(b"my own plot")
    (tmp / "E" / "predictions.jsonl").write_text('{"id": 1}\n')
    return export("E", "--config", "all")


def _stale_shards_removed(tmp: Path, done) -> None:
    assert _shards(tmp / "E") == [f"all/{s}-00000-of-00001.parquet" for s in ("test", "train", "validation")]
    _manifest_matches_folder(tmp)


def _hand_edited_card(tmp: Path) -> list[str]:
    card = tmp / "E" / "README.md"
    text = card.read_text(encoding="utf-8").replace("pretty_name: Clotho-AQA", "pretty_name: My Clotho")
    card.write_text(text + "\n## My evaluation notes\n\nKept across exports.\n", encoding="utf-8")
    return export("E", "--config", "all,questions")


def _card_kept_and_updated(tmp: Path, done) -> None:
    text = (tmp / "E" / "README.md").read_text(encoding="utf-8")
    assert "pretty_name: My Clotho" in text and "## My evaluation notes\n\nKept across exports." in text
    assert "config_name: questions" in text and "| `questions` |" in text  # our parts updated


def _card_without_yaml(tmp: Path) -> list[str]:
    (tmp / "F").mkdir()
    (tmp / "F" / "README.md").write_text("# My project\n\nNot a dataset card.\n")
    return export("F", "--config", "all")


def _foreign_file_at_a_shard_name(tmp: Path) -> list[str]:
    (tmp / "F" / "all").mkdir(parents=True)
    (tmp / "F" / "all" / "train-00000-of-00001.parquet").write_bytes(b"someone else's parquet")
    return export("F", "--config", "all")


def _config_folder_links_elsewhere(tmp: Path) -> list[str]:
    (tmp / "elsewhere").mkdir()
    (tmp / "elsewhere" / "data.bin").write_bytes(b"outside the export")
    (tmp / "F").mkdir()
    (tmp / "F" / "all").symlink_to(tmp / "elsewhere")
    return export("F", "--config", "all")


def _corrupt_manifest(tmp: Path) -> list[str]:
    manifest = tmp / "E" / MANIFEST
    manifest.write_text(manifest.read_text()[:100])
    return export("E", "--config", "all")


def _manifest_links_to_a_claim(tmp: Path) -> list[str]:
    """F holds the user's shard; F's manifest is a symlink to a JSON listing it, size and sha256 right."""
    shard = tmp / "F" / "all" / "train-00000-of-00001.parquet"
    shard.parent.mkdir(parents=True)
    shard.write_bytes(b"someone else's parquet")
    _write_record(tmp, {"all/train-00000-of-00001.parquet": shard})
    (tmp / MANIFEST).rename(tmp / "claims.json")
    (tmp / "F" / MANIFEST).symlink_to(tmp / "claims.json")
    return export("F", "--config", "all")


EDITED_SHARD = "E/all/train-00001-of-00024.parquet"


def _edited_stale_shard(tmp: Path) -> list[str]:
    shard = tmp / EDITED_SHARD
    shard.write_bytes(shard.read_bytes()[:-4] + b"mine")  # same size, other content
    return export("E", "--config", "all")


# -- item 13: interruptions and stale staging ------------------------------------------------


def _one_line_no_traceback(tmp: Path, done) -> None:
    # (the lines before it are the export's own log: a config's empty split, the size warning)
    lines = done.stderr.strip().splitlines()
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr, done.stderr
    assert [line for line in lines if "interrupted" in line] == lines[-1:], done.stderr


def _stale_staging(tmp: Path) -> list[str]:
    (tmp / "thesis.txt").write_text("years")
    dead = tmp / "E" / ".staging-killed"
    (dead / "all").mkdir(parents=True)
    (dead / "all" / "train-00000-of-00001.parquet").write_bytes(b"x" * 100_000)
    # a marker nobody holds locked: the run that wrote it is gone
    (dead / MARKER).write_text(json.dumps({"pid": os.getpid(), "command": "export"}))
    # a journal of the earlier mechanism, crafted to delete a file outside: never followed
    (dead / ".hub-export-commit.json").write_text(json.dumps({"moves": [], "stale": [
        {"path": "../thesis.txt", "size": 5, "sha256": sha256_of(tmp / "thesis.txt"), "config": "all"}], "manifest": []}))
    (tmp / "E" / ".staging-mine").mkdir()
    (tmp / "E" / ".staging-mine" / "keep.txt").write_text("a user's folder with our prefix, no marker")
    return export("E", "--config", "all")


def _only_the_dead_staging_removed(tmp: Path, done) -> None:
    assert sorted(p.name for p in (tmp / "E").glob(".staging-*")) == [".staging-mine"]


def _record_with(path):
    def setup(tmp: Path) -> list[str]:
        (tmp / "thesis.txt").write_text("years of work")
        records = json.loads((tmp / "E" / RECORD).read_text())
        records["files"].append({"path": path or "/etc/hostname", "size": 13, "sha256": sha256_of(tmp / "thesis.txt"),
                                 "command": "export", "group": "all"})
        (tmp / "E" / RECORD).write_text(json.dumps(records))
        return export("E", "--config", "all")
    return setup


def _users_card(tmp: Path) -> list[str]:
    (tmp / "F").mkdir()
    (tmp / "F" / "README.md").write_text("---\nlicense: mit\npretty_name: My own\n---\n# Mine\n")
    return export("F", "--config", "all")


def _export_running(tmp: Path) -> list[str]:
    """A first export, paused (SIGSTOP) once it holds the folder (waiting at its first staging
    folder, by construction): the second starts meanwhile."""
    point = WaitPoint("staging")
    first = start([script("clotho-aqa"), *export("E")[1:]], cwd=tmp, stdout=subprocess.DEVNULL,
                  stderr=subprocess.DEVNULL, env={**os.environ, **point.env})
    (tmp / "first.pid").write_text(str(first.pid))
    wait_until(first, point.reached, 300, "the first export")
    os.kill(first.pid, signal.SIGSTOP)
    point.release()  # it goes on once continued
    point.close()
    return export("E", "--config", "questions")


def _first_export_finishes(tmp: Path, done) -> None:
    pid = int((tmp / "first.pid").read_text())
    os.kill(pid, signal.SIGCONT)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert {"all", "questions"} <= {entry.group for entry in read_manifest(tmp / "E").values()}
    _manifest_matches_folder(tmp)


# -- should fix: errors name the user's path ---------------------------------------------------


def _readme_is_a_folder(tmp: Path) -> list[str]:
    (tmp / "F" / "README.md").mkdir(parents=True)
    (tmp / "F" / "README.md" / "inside.txt").write_text("mine")
    return export("F", "--config", "all")


def _read_only_folder(tmp: Path) -> list[str]:
    (tmp / "F").mkdir()
    (tmp / "F" / "keep.txt").write_text("mine")
    os.chmod(tmp / "F", 0o555)
    return export("F", "--config", "all")


def _names_the_folder_not_the_staging(tmp: Path, done) -> None:
    os.chmod(tmp / "F", 0o755)  # let pytest clean up
    assert f"{tmp / 'F'}: cannot write into the export folder" in done.stderr and ".staging-" not in done.stderr


# -- item 3: push uploads only the manifest, never through a symlink ------------------------


def _symlink_out_instead_of_a_plot(tmp: Path) -> list[str]:
    (tmp / "secret.txt").write_text("a secret outside the export")
    plot = tmp / "E" / "assets" / "all-answer.png"
    plot.unlink()
    plot.symlink_to(tmp / "secret.txt")
    return push("E")


def _unrelated_files_and_links(tmp: Path) -> list[str]:
    (tmp / "E" / "all" / "passwd").symlink_to("/etc/passwd")
    (tmp / "E" / "notes.md").write_text("my notes")
    (tmp / "E" / "all" / "predictions.jsonl").write_text("{}\n")
    return push("E")


def _lists_exactly_the_manifest(tmp: Path, done) -> None:
    listed = [line.split()[-1] for line in done.stdout.strip().splitlines()[:-1]]
    assert listed == sorted(read_manifest(tmp / "E"))
    assert "passwd" not in done.stdout and "notes" not in done.stdout and "predictions" not in done.stdout


def _changed_shard(tmp: Path) -> list[str]:
    shard = tmp / "E" / _shards(tmp / "E")[0]
    shard.write_bytes(b"\0" * shard.stat().st_size)
    return push("E")


# -- item 4 and issue 11 item 5: what a real push deletes and uploads, planned offline ----------

PLAN = textwrap.dedent("""
    import json, sys
    from builder_utils.hub.push import RemoteFile, local_files, plan_push, plan_upload
    plan = plan_upload("E", "me/clotho-aqa")
    local = local_files(plan, b"the card as uploaded")
    remote = {path: RemoteFile(path, size) for path, size in json.load(open("remote.json")).items()}
    # the first half of the shards was committed before the push was cut short
    done = sorted(p for p in local if p.startswith("all/"))[:2]
    remote.update({p: RemoteFile(p, local[p].size, local[p].sha256) for p in done})
    todo = plan_push(local, remote, plan.config_dirs)
    print(json.dumps({"upload": [f.path for f in todo.upload], "delete": todo.delete, "skipped": done}))
""")


def _remote_with_notes_and_stale_shards(tmp: Path) -> list[str]:
    remote = {
        "all/train-00000-of-00009.parquet": 10,          # stale shards of the pushed config
        "all/validation-00003-of-00004.parquet": 10,
        "all/notes.md": 10,                              # the rest is not ours to delete
        "all/predictions-00000-of-00001.jsonl": 10,
        "all/predictions-00000-of-00001.parquet": 10,    # a user's extra split in our config folder
        "all/train-00000-of-00009.parquet.bak": 10,
        "questions/train-00000-of-00001.parquet": 10,    # another configuration, not pushed now
        "README.md": 10,
        ".gitattributes": 10,
    }
    (tmp / "remote.json").write_text(json.dumps(remote))
    return ["python", "-c", PLAN]


def _deletes_only_stale_shards_and_resumes(tmp: Path, done) -> None:
    plan = json.loads(done.stdout)
    assert plan["delete"] == ["all/train-00000-of-00009.parquet", "all/validation-00003-of-00004.parquet"]
    local = sorted(read_manifest(tmp / "E"))
    assert plan["upload"] == [p for p in local if p not in plan["skipped"]] and len(plan["skipped"]) == 2


CASES = [
    Case("re-export keeps a user's files in the config, assets and top folders, removes our stale shards",
         _user_files_in_our_folders, protected=["E/all/notes.md", "E/assets/my-plot.png", "E/predictions.jsonl"],
         check=_stale_shards_removed),
    Case("re-export keeps the card's body additions and hand-set YAML keys", _hand_edited_card,
         check=_card_kept_and_updated),
    Case("a README.md without a YAML block is not replaced", _card_without_yaml, exit_code=2,
         stderr_has="README.md: has no YAML block", protected=["F/README.md"]),
    Case("a file export did not write at a shard name is not replaced", _foreign_file_at_a_shard_name,
         exit_code=2, stderr_has="not written by export", protected=["F"]),
    Case("a corrupt manifest is named and nothing is replaced", _corrupt_manifest, exit_code=2,
         stderr_has=f"E/{MANIFEST}: cannot read the record", protected=["E"]),
    Case("a manifest that is a symlink makes nothing ours", _manifest_links_to_a_claim, exit_code=2,
         stderr_has=f"F/{MANIFEST}: not a regular file, so not our record", protected=["F", "claims.json"]),
    Case("a configuration folder that is a symlink is not written through", _config_folder_links_elsewhere,
         exit_code=2, stderr_has="export writes its folder all/ there", protected=["elsewhere", "F"]),
    Case("a stale shard of ours that the user edited is not deleted", _edited_stale_shard,
         protected=[EDITED_SHARD]),
    Case("SIGTERM during export leaves the folder as it was and no staging", lambda tmp: export("E"),
         exit_code=143, protected=["E"], interrupt=signal.SIGTERM, wait_at="export-shard"),
    Case("Ctrl-C during export: one line, status 130", lambda tmp: export("E"), exit_code=130,
         stderr_has="interrupted", protected=["E"], interrupt=signal.SIGINT, wait_at="export-shard",
         check=_one_line_no_traceback),
    Case("the next export removes a killed export's staging, and only that; a crafted journal is not followed",
         _stale_staging, protected=["E/.staging-mine", "thesis.txt"], no_debris_under=(),
         check=_only_the_dead_staging_removed),
    Case("a record entry with a traversal path, its sha256 right, makes nothing ours", _record_with("../thesis.txt"),
         exit_code=2, stderr_has="nothing in it is ours", protected=["thesis.txt", "E"]),
    Case("a record entry with an absolute path is refused by export", _record_with(None), exit_code=2,
         stderr_has="nothing in it is ours", protected=["thesis.txt", "E"]),
    Case("push --dry_run refuses a record entry /etc/hostname", lambda tmp: (_record_with(None)(tmp), push("E"))[1],
         exit_code=2, stderr_has="'/etc/hostname': an absolute path", protected=["E"]),
    Case("a user's README.md with YAML, in a folder export never wrote, is not rewritten", _users_card,
         exit_code=2, stderr_has="README.md: not written by export", protected=["F/README.md"]),
    Case("two exports into one --out at once: the second is refused", _export_running,
         exit_code=2, stderr_has="another command is writing into this folder", no_debris_under=(),
         check=_first_export_finishes),
    Case("a README.md that is a folder is named, not the staging file", _readme_is_a_folder, exit_code=2,
         stderr_has="F/README.md: not a regular file", protected=["F"]),
    pytest.param(
        Case("a read-only export folder is named, not the staging folder", _read_only_folder, exit_code=2,
             protected=["F/keep.txt"], check=_names_the_folder_not_the_staging),
        marks=pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders"),
    ),
    Case("push refuses a symlink leaving the folder in place of our plot", _symlink_out_instead_of_a_plot,
         exit_code=2, stderr_has="a symlink leaving the folder", protected=["secret.txt", "E"]),
    Case("push lists only the manifest: no user file, no symlink to /etc/passwd", _unrelated_files_and_links,
         check=_lists_exactly_the_manifest),
    Case("push refuses a shard changed since export", _changed_shard, exit_code=2,
         stderr_has="content changed since export"),
    Case("push --dry_run rejects an invalid repo id",
         lambda tmp: ["clotho-aqa", "push", "--folder", "E", "--repo_id", "me/clotho--aqa", "--dry_run"],
         exit_code=2, stderr_has="invalid --repo_id 'me/clotho--aqa'"),
    Case("push deletes only stale shards of the pushed configs; a re-run uploads only what is missing",
         _remote_with_notes_and_stale_shards, check=_deletes_only_stale_shards_and_resumes),
]


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> Path:
    """``release/`` and ``E/`` (config ``all`` in 200 KB shards), made once with the real commands."""
    root = tmp_path_factory.mktemp("hub_safety")
    for argv in (["clotho-aqa", "synth", "--out", "release", "--num_files", "5", "--duration", "1.0"],
                 export("E", "--config", "all", "--max_shard_size", "200KB")):
        subprocess.run([script(argv[0]), *argv[1:]], cwd=root, check=True, capture_output=True)
    assert Path(root, EDITED_SHARD).is_file() and len(_shards(root / "E")) > 3
    return root


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_hub_safety(case: Case, exported: Path, tmp_path: Path) -> None:
    for name in ("release", "E"):
        shutil.copytree(exported / name, tmp_path / name, symlinks=True)
    run_case(case, tmp_path)
