"""The user's own tui.py: must win over anything of dyn-inspect's."""
OWNER = "user"
