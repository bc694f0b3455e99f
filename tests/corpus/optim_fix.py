"""A compiled optimizer step whose float lr an LR scheduler changes: torch's ``step``
recompiles on ``param_groups[0]['lr'] == 0.01`` for every new lr. tests/lsp/test_lsp_quick_fixes.py
applies the language server's tensor-lr fix to a copy, records it and compares."""

import torch


def main() -> None:
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)  # FIX:lr
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)

    @torch.compile
    def opt_step() -> None:
        opt.step()

    x = torch.rand(8, 4)
    for step in range(3):
        model(x).sum().backward()
        opt_step()
        sched.step()
        opt.zero_grad()
        print(f"step {step}: {model.weight.sum().item():.4f}")


if __name__ == "__main__":
    main()
