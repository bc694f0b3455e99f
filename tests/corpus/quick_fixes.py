"""One of each graph break and recompile the language server has a quick fix for
(tests/lsp/test_lsp_quick_fixes.py applies every fix to a copy, records the copy and compares
its breaks, recompiles and stdout with this program's). Markers name the lines."""

import torch


def noisy(t):
    print("noisy", t.shape[0])  # BREAK:helper_print
    return t + 1


@torch.compile
def chatty(x):
    y = x.cos()
    print("chatty", y.shape[0])  # BREAK:print
    return y + 1


@torch.compile
def talky(x):
    y = x.sin()
    print("talky", y.shape[1])  # BREAK:talky
    return y * 2


@torch.compile
def branchy(x):
    h = x.relu()
    if h.mean() > 0.5:  # BREAK:branch
        h = h * 0.5
    return h.sin()


@torch.compile
def scalar(x):
    s = x.sum().item()  # BREAK:item
    return x * s


@torch.compile
def with_helper(x):
    y = x.exp()
    y = noisy(y)  # CALLS:helper
    return y - 1


@torch.compile
def by_shape(x):  # RECOMPILE:shape
    return (x * 2).sum(dim=0)


@torch.compile
def scaled(x, n):  # RECOMPILE:int
    return x * n


def main() -> None:
    torch.manual_seed(0)
    x = torch.rand(8, 4)
    for step in range(2):
        out = chatty(x) + talky(x) + branchy(x) + scalar(x) + with_helper(x)
        print(f"step {step}: {out.sum().item():.4f}")
    for n in (4, 8):
        rows = torch.rand(n, 4)  # FIX:rows
        print(f"rows {n}: {by_shape(rows).sum().item():.4f}")
    for n in (2, 3):
        print(f"scaled {n}: {scaled(x, n).sum().item():.4f}")
    print("quick_fixes done", flush=True)


if __name__ == "__main__":
    main()
