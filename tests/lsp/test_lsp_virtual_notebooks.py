"""Finding recorded cells in jupyterlab-lsp's virtual documents (``lsp.virtual_notebooks``),
on the text the real client sent: the blocks' first lines are where jupyterlab-lsp maps a
cell's first line, and their lines are the cell's as its editor holds them. The server on
these documents, over the protocol, is tested in tests/notebook/test_notebook.py on a
notebook executed in a real kernel; in a real JupyterLab, by vscode-extension/e2e."""

from __future__ import annotations

from dyn_inspect.lsp.notebook_cells import cell_key
from dyn_inspect.lsp.virtual_notebooks import Block, block_keys, blocks, carried, is_virtual, real_root

# What jupyterlab-lsp 5.3.0 in JupyterLab 4.6.6 sent (textDocument/didOpen, read from the
# wire) for the real-client test's notebook, vscode-extension/e2e/make_notebook.py: its four
# cells joined by two blank lines, the line magics rewritten.
CAPTURED = (
    'get_ipython().run_line_magic("load_ext", " dyn_inspect")\n\n\n'
    'get_ipython().run_line_magic("dyn_inspect", " on")\n\n\n'
    "import torch\n\n\n@torch.compile\ndef f(x):\n    if x.sum() > 0:  # data-dependent branch: graph break\n"
    "        return x * 2\n    return x + 1\n\n\n"
    "f(torch.ones(4))\n"
)
# The same cells as the kernel recorded them (``notebook_cell`` events: IPython's own
# rewriting of the magics, with single quotes), read from that notebook's run.
RECORDED = {
    "/tmp/ipykernel_5520/618880880.py": "get_ipython().run_line_magic('load_ext', 'dyn_inspect')\n",
    "/tmp/ipykernel_5520/3263373372.py": "get_ipython().run_line_magic('dyn_inspect', 'on')\n",
    "/tmp/ipykernel_5520/2446103472.py": (
        "import torch\n\n\n@torch.compile\ndef f(x):\n    if x.sum() > 0:  # data-dependent branch: graph break\n"
        "        return x * 2\n    return x + 1\n"
    ),
    "/tmp/ipykernel_5520/4021685383.py": "f(torch.ones(4))\n",
}
DEFINES_F = "/tmp/ipykernel_5520/2446103472.py"
CALLS_F = "/tmp/ipykernel_5520/4021685383.py"


def test_the_cells_with_code_are_found_where_jupyterlab_lsp_sends_them() -> None:
    found = blocks(RECORDED, CAPTURED)
    # the magic-only cells have no code to find; f's cell starts on line 6, the call on 16
    assert [(b.path, b.start) for b in found] == [(DEFINES_F, 6), (CALLS_F, 16)]
    defines = found[0]
    # f's `if` is the cell's line 6 (1-based), the document's line 11 (0-based): as sent
    assert defines.lines[5].strip().startswith("if x.sum() > 0:") and CAPTURED.splitlines()[defines.start + 5] == defines.lines[5]
    assert defines.end == 14  # the cell's lines, not the blank lines after it


EDITED = CAPTURED.replace("def f(x):\n", "def f(x):\n    # edited in JupyterLab\n")


def test_an_edited_cell_is_not_found_but_followed_through_the_edit() -> None:
    """An edited cell is no longer the recorded one (``blocks``), but the block found before
    the edit is followed into the edited text (``carried``): one line longer, its `if` one
    line down, the blocks after it one line down too."""
    assert [b.path for b in blocks(RECORDED, EDITED)] == [CALLS_F]
    before = blocks(RECORDED, CAPTURED)
    (defines,) = carried([b for b in before if b.path == DEFINES_F], CAPTURED, EDITED)
    assert defines.start == 6 and len(defines.lines) == len(before[0].lines) + 1
    assert defines.lines[6].strip().startswith("if x.sum() > 0:") and EDITED.splitlines()[defines.start + 6] == defines.lines[6]
    (calls,) = carried([b for b in before if b.path == CALLS_F], CAPTURED, EDITED)
    assert calls.start == 17 and calls.lines == ["f(torch.ones(4))"]


def test_the_run_is_chosen_by_the_cells_a_document_holds() -> None:
    """The cell defining f has two blank lines of its own, as the separators between cells:
    it is still one candidate cell, named as ``cell_key`` names the recorded cell."""
    keys = block_keys(CAPTURED)
    assert cell_key(RECORDED[DEFINES_F]) in keys and cell_key(RECORDED[CALLS_F]) in keys
    assert cell_key("import torch\n") in keys  # (a part of it, too: a candidate, never a match)
    assert cell_key("def g(x):\n    return x\n") not in keys


def test_a_cell_magic_cell_is_found_and_kept_line_for_line() -> None:
    """jupyterlab-lsp sends ``%%dyn_inspect`` and its body as one call on a string (its
    overrides.ts: the body's first line on the magic's line, ``\"\"\")`` after its last); its
    editor still has the magic on line 1 and the body on lines 2-: a finding on the body's
    line n is sent on the block's line n - 1. The kernel recorded the cell with the magic's
    line blanked (the extension's input transformer)."""
    document = (
        'get_ipython().run_line_magic("load_ext", " dyn_inspect")\n\n\n'
        'get_ipython().run_cell_magic("dyn_inspect", "", """@torch.compile(fullgraph=True)\n'
        "def g(x):\n    if x.sum() > 0:\n        return x\n    return -x\n"
        'g(torch.ones(3))""")\n'
    )
    recorded = {"/tmp/ipykernel_1/7.py": "\n@torch.compile(fullgraph=True)\ndef g(x):\n    if x.sum() > 0:\n        return x\n    return -x\ng(torch.ones(3))\n"}
    (block,) = blocks(recorded, document)
    assert block == Block(
        "/tmp/ipykernel_1/7.py",
        3,
        [
            'get_ipython().run_cell_magic("dyn_inspect", "", """',
            "@torch.compile(fullgraph=True)",
            "def g(x):",
            "    if x.sum() > 0:",
            "        return x",
            "    return -x",
            "g(torch.ones(3))",
        ],
    )
    assert cell_key(recorded["/tmp/ipykernel_1/7.py"]) in block_keys(document)


def test_the_virtual_folder_is_not_the_workspace(tmp_path) -> None:
    root = tmp_path / ".virtual_documents"
    assert real_root(root) == tmp_path and real_root(tmp_path) == tmp_path
    assert is_virtual(str(root / "nb.ipynb")) and not is_virtual(str(tmp_path / "nb.ipynb"))
