"""String helpers (plain Python; traced through by Dynamo)."""


def banner(name: str) -> str:
    return f"[{name}]"
