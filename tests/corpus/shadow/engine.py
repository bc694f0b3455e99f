"""The user's own engine.py: must win over anything of dyn-inspect's."""
OWNER = "user"
