"""examples/quickstart.ipynb runs top to bottom in a real Jupyter kernel, headless, from an empty folder."""

from __future__ import annotations

import base64
import io
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from PIL import Image

NOTEBOOK = Path(__file__).resolve().parent.parent / "examples" / "quickstart.ipynb"


def test_notebook_is_committed_without_outputs():
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(notebook)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert code and all(cell.outputs == [] and cell.execution_count is None for cell in code)


def test_notebook_runs_in_a_kernel_and_creates_the_demo_data(tmp_path, monkeypatch):
    # The kernel inherits this environment: keep load_dataset's cache out of the user's home.
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "hf_cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    client = NotebookClient(notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}})
    client.execute()  # raises CellExecutionError, with the cell and its traceback, on any error

    assert (tmp_path / "demo_output" / "clevr_math" / "hub" / "README.md").is_file()
    assert (tmp_path / "demo_output" / "clotho_aqa" / "hub" / "README.md").is_file()
    printed = "".join(o.get("text", "") for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs)
    assert "multi-hop questions" in printed and "train questions are unanimous" in printed
    assert "float32 16000" in printed  # the clip, resampled to 16 kHz
    shown = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs
             if o.output_type in ("execute_result", "display_data")]
    kinds = {kind for o in shown for kind in o["data"]}
    assert "text/html" in kinds  # the audio player
    # One figure per problem (issue 40): a PNG per train category, a multi-hop test problem, a clip.
    figures = [o for o in shown if "image/png" in o["data"]]
    assert len(figures) >= 4, [o["data"].keys() for o in shown]
    for figure in figures:
        width, height = Image.open(io.BytesIO(base64.b64decode(figure["data"]["image/png"]))).size
        assert width > 900 and height >= 300  # the media beside the question, answer and reasoning
    assert "accuracy" in printed and "multi-hop questions; majority baseline" in printed  # evaluate in memory
    # Clean output: no stream on stderr (warnings, progress bars), no warning text anywhere.
    streams = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs if o.output_type == "stream"]
    assert [o for o in streams if o.name == "stderr"] == [], [o.text[:300] for o in streams if o.name == "stderr"]
    assert "Warning" not in printed and "warn" not in printed.lower() and "it/s" not in printed, printed[:2000]
    # The demo data was made quietly: no demo transcript in a cell.
    assert "made the demo data in" in printed
    assert "load_dataset(" not in printed and "synthetic CLEVR world" not in printed, printed[:2000]

    # Opened from a checkout's examples/ folder (Jupyter's default), it finds ../demo_output and
    # makes nothing there.
    examples = tmp_path / "examples"
    examples.mkdir()
    again = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(again, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(examples)}}).execute()
    printed = "".join(o.get("text", "") for cell in again.cells if cell.cell_type == "code" for o in cell.outputs)
    assert f"demo data: {tmp_path / 'demo_output'}" in printed and "made the demo data" not in printed
    assert list(examples.iterdir()) == []

