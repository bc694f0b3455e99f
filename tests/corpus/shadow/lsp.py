"""The user's own lsp.py: must win over anything of dyn-inspect's."""
OWNER = "user"
