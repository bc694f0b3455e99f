"""Which logged shape guards torch installed (inspector/analysis/installed_guards.py), and the
sizes a guard tree accepts (inspector/analysis/size_bounds.py).

The guard-tree lines and logged expressions are torch 2.13's own, copied from a recording of
tests/corpus/fixes/hf_llama_mask.py (a tiny Llama trained on lengths 8, 12, 16): the tree
checks ``2 <= input_ids.shape[1] <= 2048``, and length 16 ran without recompiling, so the
``Eq(s27, 12)`` family logged during the backward's compile was never installed.
tests/inspector/test_fix_corpus.py checks the same on a fresh recording."""

from __future__ import annotations

from dyn_inspect.engine.schema import Symbol
from dyn_inspect.inspector.analysis.guards import parse_guards
from dyn_inspect.inspector.analysis.installed_guards import installed
from dyn_inspect.inspector.analysis.size_bounds import accepted_sizes

TREE = """\
TREE_GUARD_MANAGER:
+- RootGuardManager
| +- LAMBDA_GUARD: torch._functorch.aot_autograd.utils.top_saved_tensors_hooks ids == None  # _dynamo/output_graph.py:1135 in init_ambient_guards
+- LAMBDA_GUARD: L['kwargs']['input_ids'].stride()[0] == L['kwargs']['input_ids'].size()[1]  # (unknown source)
+- LAMBDA_GUARD: L['kwargs']['input_ids'].size()[1] + ((-1)*L['kwargs']['attention_mask'].size()[1]) <= 0  # if (padding_length := kv_length + kv_offset - attention_mask.shape[-1]) > 0:  # transformers/masking_utils.py:229 in prepare_padding_mask
+- LAMBDA_GUARD: L['kwargs']['attention_mask'].size()[1] <= L['kwargs']['input_ids'].size()[1]  # if padding_mask is not None and padding_mask.shape[-1] > kv_length:  # transformers/masking_utils.py:268 in _ignore_causal_mask_sdpa
+- LAMBDA_GUARD: 2 <= L['kwargs']['input_ids'].size()[1] <= 2048  # recordable_keys = {  # transformers/utils/output_capturing.py:332 in wrapper
+- LAMBDA_GUARD: 2 <= L['kwargs']['attention_mask'].size()[1]  # if isinstance(attention_mask, (torch.Tensor, BlockMask)):  # transformers/masking_utils.py:818
+- LAMBDA_GUARD: L['kwargs']['input_ids'] is L['kwargs']['labels']             # if labels is not None:
"""
SYMBOLS = [
    Symbol(symbol="s27", source="L['kwargs']['input_ids'].size()[1]"),
    Symbol(symbol="s16", source="L['kwargs']['attention_mask'].size()[1]"),
]
INSTALLED = ["-s16 + s27 <= 0", "s16 <= s27", "2*s27 <= 4096"]
NOT_INSTALLED = ["Eq(s27, 12)", "Eq(32*s27, 384)", "Eq(s27**2, 144)", "Eq(2*s27, 24)", "Eq(64*s27, 768)", "Eq(s27 + 1, 13)"]


def test_the_llamas_logged_guards_are_sorted_by_its_guard_tree() -> None:
    tree = parse_guards(TREE)
    assert sum(g.kind == "LAMBDA_GUARD" for g in tree) == 7
    found = installed(tree, SYMBOLS, INSTALLED + NOT_INSTALLED)
    assert found == [True] * len(INSTALLED) + [False] * len(NOT_INSTALLED)


def test_same_relation_in_other_words_is_installed() -> None:
    tree = parse_guards(TREE)
    assert installed(tree, SYMBOLS, ["s27 >= 2", "Eq(s27, s27)", "s27 <= 2048", "4*s27 <= 8192", "s27 - s16 <= 0"]) == [
        True,
        False,  # (a tautology is not a guard torch wrote)
        True,
        True,
        True,
    ]


def test_no_tree_or_what_cannot_be_compared_says_nothing() -> None:
    assert installed([], SYMBOLS, INSTALLED) == [None, None, None]
    tree = parse_guards(TREE)
    # torch's own functions and symbols of no input are left unlabelled, not called "not installed"
    assert installed(tree, SYMBOLS, ["Eq(Mod(s27, 2), 0)", "u0 >= 0", "FloorDiv(s27, 2) <= 1024"]) == [None, None, None]


def test_text_from_a_run_is_never_evaluated() -> None:
    """A run is untrusted, and sympify evaluates: names, calls and huge powers never reach it."""
    tree = parse_guards(
        "+- LAMBDA_GUARD: __import__('os').system('touch /tmp/pwned-by-guard') <= 1\n"
        "+- LAMBDA_GUARD: 9**9**9**9 <= L['kwargs']['input_ids'].size()[1]\n"
    )
    hostile = [
        "Eq(__import__('os').system('touch /tmp/pwned-by-guard'), 0)",
        "s27 <= 9**9**9**9",
        "Eq((s27)**99999999, 1)",
        "s27 <= " + "(" * 300 + "1" + ")" * 300,
    ]
    assert installed(tree, SYMBOLS, hostile) == [None, None, None, None]


# torch 2.13's tree for tests/corpus/shapes.py's `dyn` (dynamic=True; `if y.shape[0] > 8`,
# `if x.shape[1] == 3`), as TORCH_LOGS=guards printed it.
SHAPES_TREE = """\
+- RootGuardManager
| +- GuardManager: source=L['x'], accessed_by=FrameLocalsGuardAccessor(key='x', framelocals_idx=0), type=<class 'torch.Tensor'>, tag_safe=(False, False)
| | +- TENSOR_MATCH: check_tensor(L['x'], Tensor, DispatchKeySet(CPU, BackendSelect, ADInplaceOrView, AutogradCPU), torch.float32, device=None, requires_grad=False, size=[None, 3], stride=[3, 1])  # n = x.shape[0]  # SHAPES:symbol  # shapes.py:13 in dyn
| +- GuardManager: source=L['y'], accessed_by=FrameLocalsGuardAccessor(key='y', framelocals_idx=1), type=<class 'torch.Tensor'>, tag_safe=(False, False)
| | +- TENSOR_MATCH: check_tensor(L['y'], Tensor, DispatchKeySet(CPU, BackendSelect, ADInplaceOrView, AutogradCPU), torch.float32, device=None, requires_grad=False, size=[None], stride=[1])  # if y.shape[0] > 8:  # SHAPES:guard  # shapes.py:15 in dyn
+- LAMBDA_GUARD: 2 <= L['x'].size()[0] <= 4096  # n = x.shape[0]  # SHAPES:symbol  # shapes.py:13 in dyn
+- LAMBDA_GUARD: 9 <= L['y'].size()[0] <= 4096  # if y.shape[0] > 8:  # SHAPES:guard  # shapes.py:15 in dyn
"""
SHAPES_SYMBOLS = [Symbol(symbol="s77", source="L['x'].size()[0]"), Symbol(symbol="s27", source="L['x'].size()[1]"), Symbol(symbol="s17", source="L['y'].size()[0]")]


def test_strict_relations_and_static_dims_are_compared_over_the_integers() -> None:
    """`s17 > 8` is the tree's `9 <= y`; `Eq(s27, 3)` its `size=[None, 3]` (both were called
    "never checked" while a y of 8 rows recompiled)."""
    tree = parse_guards(SHAPES_TREE)
    exprs = ["s17 > 8", "Eq(s27, 3)", "2*s77 < 8193", "s77 >= 2", "s17 > 9", "Eq(s27, 4)", "s77 < 4096"]
    assert installed(tree, SHAPES_SYMBOLS, exprs) == [True, True, True, True, False, False, False]


def test_accepted_sizes_are_read_off_the_tree() -> None:
    got = {(d.source, d.text, d.dynamic) for d in accepted_sizes(parse_guards(SHAPES_TREE))}
    assert got == {("L['x'].size()[0]", "2..4096", True), ("L['x'].size()[1]", "= 3", False), ("L['y'].size()[0]", "9..4096", True)}
    # a static compile (no None among the sizes), and the Llama's relations only: nothing
    assert accepted_sizes(parse_guards(SHAPES_TREE.replace("size=[None, 3]", "size=[5, 3]").replace("size=[None]", "size=[10]"))) == []
    assert accepted_sizes(parse_guards(TREE)) == []
