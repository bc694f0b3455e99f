"""The MCP server's agent loop (tests/mcp/test_mcp_server.py): a graph break (a print in a
compiled function) and a recompile (a batch of 4 rows, then 8) whose root cause has a fix
that keeps the program's behaviour: mark the rows' dim dynamic where they are made."""

import torch


@torch.compile
def chatty(x):
    y = x.cos()
    print("chatty", y.shape[1])  # BREAK:print
    return y + 1


@torch.compile
def by_shape(x):  # RECOMPILE:shape
    return (x * 2).sum(dim=0)


torch.manual_seed(0)
print("chatty", float(chatty(torch.rand(2, 4)).sum()))
for n in (4, 8):
    rows = torch.rand(n, 4)  # FIX:rows
    print(f"rows {n}: {by_shape(rows).sum().item():.4f}")
