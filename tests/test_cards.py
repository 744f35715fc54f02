"""The Hub dataset cards: valid YAML for the Hub (offline), the template's sections, and usage
examples that run as written on an exported folder, without torch or torchcodec."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from huggingface_hub import DatasetCard

from builder_utils.clevr.synth import write_clevr_folder
from builder_utils.hub import export_builder
from builder_utils.hub.card import CardError, load_card_template
from builder_utils.hub.card_metadata import known_values, metadata_problems
from builder_utils.hub.trainer_card import snippet_before_trl
from clevr_math import ClevrMath
from clotho_aqa import ClothoAQA
from clotho_aqa.synth import write_synthetic_release

CARDS = ("clevr_math", "clotho_aqa")
CODE_BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
# Runs before the examples: datasets then sees no torchcodec, whatever is installed.
NO_TORCHCODEC = "import sys\nsys.modules['torchcodec'] = None\n"


# Each export the card examples are run on: (builder, template, configs, media). The first of each
# builder leaves its default configuration (CLEVR-Math `general`, Clotho-AQA `all`) out.
EXPORTS = {
    "clevr_math_inline": ("clevr_math", ["multihop"], "inline"),
    "clevr_math_shared": ("clevr_math", ["general", "multihop"], "shared"),
    "clotho_aqa_inline": ("clotho_aqa", ["yes_no_majority", "questions"], "inline"),
    "clotho_aqa_shared": ("clotho_aqa", ["questions", "yes_no_majority"], "shared"),
    # With the trainer configurations: their card sections' code blocks run too.
    "clevr_math_train": ("clevr_math", ["multihop", "conversations_multihop", "prompts_multihop"], "shared"),
    # Only the training layouts (issue 40): the Usage section points to their trainer sections.
    "clevr_math_training_only": ("clevr_math", ["conversations", "prompts"], "inline"),
    "clotho_aqa_training_only": ("clotho_aqa", ["conversations", "prompts"], "inline"),
}


@pytest.fixture(scope="module")
def exports(tmp_path_factory):
    root = tmp_path_factory.mktemp("cards")
    clevr = write_clevr_folder(root / "CLEVR_v1.0", 4, seed=0, splits=("train", "val", "test"), progress=False)
    clotho = write_synthetic_release(root / "release", num_files=5, seed=0).root
    for name, (card, configs, media) in EXPORTS.items():
        builder, data = (ClevrMath, clevr) if card == "clevr_math" else (ClothoAQA, clotho)
        export_builder(builder, root / name, card_template=card, data_dir=data, configs=configs, media=media,
                       cache_dir=root / "cache", progress=False)
    # The card tests read the first export of each builder under the builder's own name.
    for card in CARDS:
        (root / card).symlink_to(root / f"{card}_inline")
    return root


def test_known_value_lists_are_there():
    # If a datasets release drops one of these lists, the check would silently weaken.
    known = known_values()
    assert all(known[field] for field in known), [field for field in known if not known[field]]


@pytest.mark.parametrize("name", CARDS)
def test_templates_pass_the_hub_checks(name):
    assert metadata_problems(load_card_template(name).metadata) == []


@pytest.mark.parametrize("name", CARDS)
def test_exported_card_yaml_passes_the_hub_checks(exports, name):
    card = DatasetCard((exports / name / "README.md").read_text(encoding="utf-8"))
    data = card.data.to_dict()
    assert data["size_categories"] == ["n<1K"] and data["configs"]
    assert metadata_problems(data) == []


@pytest.mark.parametrize(
    "change, problem",
    [
        ({"language": ["english"]}, "language: unknown value 'english'"),
        ({"task_categories": ["audio-question-answering"]}, "task_categories: unknown value"),
        ({"size_categories": ["n<10"]}, "size_categories: unknown value"),
        ({"annotations_creators": ["crowd"]}, "annotations_creators: unknown value"),
        ({"multilinguality": ["mono"]}, "multilinguality: unknown value"),
        ({"license": "CC-BY-4.0"}, "the Hub spells it 'cc-by-4.0'"),
        ({"license": "freesound"}, "not a Hub license id"),
        ({"license": "other"}, "needs license_name and license_link"),
        ({"license": "other", "license_name": "Sampling Plus", "license_link": "x"}, "must be a lower-case id"),
        ({"tags": ["ok", 3]}, "tags must be a string or a list of strings"),
        ({"pretty_name": ["x"]}, "pretty_name must be a string"),
        ({"source_datasets": ["clevr"]}, "neither 'original' nor 'extended|<dataset>'"),
    ],
)
def test_each_hub_rule_is_checked(change, problem):
    metadata = {**load_card_template("clevr_math").metadata, **change}
    problems = metadata_problems(metadata)
    assert len(problems) == 1 and problem in problems[0], problems


def test_a_template_breaking_a_rule_is_refused_with_its_file(tmp_path):
    text = (Path(load_card_template("clotho_aqa").path)).read_text(encoding="utf-8")
    bad = tmp_path / "bad.md"
    bad.write_text(text.replace("license_name: cc-sampling-plus-1.0\n", ""), encoding="utf-8")
    with pytest.raises(CardError, match=rf"{re.escape(str(bad))}: front matter: license 'other' needs license_name"):
        load_card_template(bad)


def test_clotho_license_other_is_named_and_linked():
    metadata = load_card_template("clotho_aqa").metadata
    assert "other" in metadata["license"]
    assert metadata["license_name"] == "cc-sampling-plus-1.0"
    assert metadata["license_link"] == "https://creativecommons.org/licenses/sampling+/1.0/"


LINKS = {
    "clevr_math": [
        "https://arxiv.org/abs/2208.05358",  # CLEVR-Math
        "https://arxiv.org/abs/1612.06890",  # CLEVR
        "https://cs.stanford.edu/people/jcjohns/clevr/",
        "https://github.com/dali-does/clevr-math",
        "https://github.com/facebookresearch/clevr-dataset-gen",
    ],
    "clotho_aqa": [
        "https://arxiv.org/abs/2204.09634",  # Clotho-AQA
        "https://arxiv.org/abs/1910.09387",  # Clotho
        "https://zenodo.org/records/6473207",
        "https://github.com/partha2409/AquaNet",
    ],
}
SECTIONS = ["## Dataset Sources", "## Uses", "**Direct use.**", "**Out-of-scope use.**", "## Dataset Creation",
            "### Annotations", "### Personal and Sensitive Information", "## Bias, Risks and Limitations",
            "## Licenses", "## Citation"]


@pytest.mark.parametrize("name", CARDS)
def test_cards_link_papers_data_and_code_and_have_the_hub_template_sections(exports, name):
    body = (exports / name / "README.md").read_text(encoding="utf-8")
    assert [link for link in LINKS[name] if link not in body] == []
    positions = [body.find(section) for section in SECTIONS]
    assert -1 not in positions, [s for s, p in zip(SECTIONS, positions) if p == -1]
    assert positions == sorted(positions)


def test_clotho_card_warns_about_voices_and_says_who_annotated():
    body = load_card_template("clotho_aqa").body
    private = body[body.index("### Personal and Sensitive Information"):body.index("## Bias")]
    assert "voices" in private
    annotations = body[body.index("### Annotations"):body.index("### Personal")]
    assert "Mechanical Turk" in annotations and "three" in annotations


# Checks on what the examples produced, appended after them in the same process; a check runs
# when the names it reads were defined by the card's examples.
AFTER_EXAMPLES = {
    "clevr_math": [
        # keyed on `multihop`: the Usage filter defines it with train and test (a trainer snippet's `train` is other rows)
        ("multihop", 'assert len(train) > 0 and multihop not in set(train["category"])'),
        # `test` exists only where the export has a test split (the card's filter defines it then)
        ("test", 'assert set(test["category"]) <= {multihop}'),
        ("one_template", 'assert set(one_template["template"]) <= {"subtraction"} and set(one_template["template_index"]) <= {3}'),
        ("row", 'assert row["image"] is not None and isinstance(row["label"], int)'),
    ],
    "clotho_aqa": [
        ("rate", "assert rate == 44_100 and array.ndim == 1"),
        ("array_16k", "assert abs(len(array_16k) - len(array) * 16_000 / rate) <= 1"),
        ("yes_no", 'assert set(yes_no["train"]["answer_type"]) == {"yes_no"} and len(yes_no["train"]) > 0'),
        ("agreed", 'assert all(agreed["train"]["unanimous"])'),
        ("first", 'assert first["question_id"] == row["question_id"]'),
    ],
}


def run_card_examples(folder: Path, checks, tmp_path: Path) -> subprocess.CompletedProcess:
    """Run every ```python block of the card in ``folder`` as one script, without torchcodec.

    Generic on purpose: any block a card gains (per-configuration sections included) is run, up
    to its ``from trl import`` line (TRL is not a dependency; make test-train runs the rest).
    ``REPO_ID`` becomes the folder; each check runs if its name was defined.
    """
    body = (folder / "README.md").read_text(encoding="utf-8")
    blocks = CODE_BLOCK.findall(body)
    assert len(blocks) >= 2
    code = "\n".join(snippet_before_trl(block) for block in blocks).replace('"REPO_ID"', repr(str(folder)))
    after = "\n".join(f"if {name!r} in globals():\n    {check}" for name, check in checks)
    script = tmp_path / "examples.py"
    script.write_text(NO_TORCHCODEC + code + "\n" + after + "\n", encoding="utf-8")
    env = {**os.environ, "HF_DATASETS_CACHE": str(tmp_path / "hf_cache"), "HF_HUB_OFFLINE": "1",
           "HF_DATASETS_DISABLE_PROGRESS_BARS": "1"}
    return subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=300)


@pytest.mark.parametrize("name", list(EXPORTS))
def test_card_examples_run_as_written_without_torchcodec(exports, name, tmp_path):
    card = EXPORTS[name][0]
    done = run_card_examples(exports / name, AFTER_EXAMPLES[card], tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]


@pytest.mark.parametrize("name", list(EXPORTS))
def test_every_section_a_card_refers_to_is_in_it(exports, name):
    text = (exports / name / "README.md").read_text(encoding="utf-8")
    headings = {line.lstrip("#").strip() for line in text.splitlines() if line.startswith("#")}
    referred = set(re.findall(r'(?:see|section|[Ss]ection) "([^"]+)"', " ".join(text.split())))
    referred |= set(re.findall(r': "([A-Z][^"]+)" below', " ".join(text.split())))
    assert referred <= headings, (referred - headings, sorted(headings))
    training = any(c.startswith(("conversations", "prompts")) for c in EXPORTS[name][1])
    assert ("Training with TRL and verl" in referred) is training and ("Training with TRL and verl" in headings) is training
    questions_exported = not all(c.startswith(("conversations", "prompts")) for c in EXPORTS[name][1])
    assert ("This export holds only training layouts" in text) is not questions_exported


@pytest.mark.parametrize("name", list(EXPORTS))
def test_card_default_is_an_exported_configuration(exports, name):
    card = DatasetCard((exports / name / "README.md").read_text(encoding="utf-8"))
    defaults = [c["config_name"] for c in card.data.to_dict()["configs"] if c.get("default")]
    configs = EXPORTS[name][1]
    assert defaults in ([configs[0]], [c for c in configs if c in ("general", "all")][:1])
    assert f"The default configuration is `{defaults[0]}`." in card.text
    assert "``" not in card.text.replace("```", "")


@pytest.mark.parametrize("name", list(EXPORTS))
def test_card_states_the_data_source_and_how_to_install(exports, name):
    text = (exports / name / "README.md").read_text(encoding="utf-8")
    # Both fixtures are synthetic: the card says so, and never that the data is the real release.
    assert "synthetic" in text.split("## Dataset Sources")[0]
    assert "Scenes and images are CLEVR v1.0" not in text and "Read from the official release" not in text
    assert "pip install clevr-clotho-qa" not in text
    if "shared" in name or "clotho" in name:
        assert "pip install ./clevr-clotho-qa" in text


def test_card_names_the_renderer_of_a_synthetic_world(exports):
    # The CLEVR-Math fixtures are Pillow-rendered worlds: the card says which renderer drew the
    # images and that its look is stylised, not CLEVR's, in a paragraph of its own.
    for name in (n for n in EXPORTS if "clevr" in n):
        text = (exports / name / "README.md").read_text(encoding="utf-8")
        assert "drawn by this package's Pillow renderer in a stylised look" in text
        assert "\n\n**Which renderer made the images.**" in text


def test_data_source_names_each_renderer_a_world_records(tmp_path):
    root = write_clevr_folder(tmp_path / "w", {"train": 1, "val": 1}, seed=0, render=False, progress=False)
    assert "images drawn by this package's Pillow renderer in a stylised look" in \
        ClevrMath(config_name="general", data_dir=str(root)).data_source()
    path = root / "scenes" / "CLEVR_val_scenes.json"
    path.write_text(path.read_text().replace('"renderer": "pillow"', '"renderer": "blender"', 1))
    both = ClevrMath(config_name="general", data_dir=str(root)).data_source()
    assert "path-traced by Blender's Cycles" in both and "Pillow renderer" in both


def test_data_source_of_the_real_inputs_is_the_release(tmp_path):
    # Without data_dir the builders read the real releases, and say so.
    assert ClevrMath(config_name="general").data_source().startswith("Scenes and images are CLEVR v1.0")
    assert ClothoAQA(config_name="all").data_source().startswith("Read from the official release")
