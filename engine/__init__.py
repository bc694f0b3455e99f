"""The recording side: runs the user's program under the real compile pipeline and writes
what torch reports into an append-only event log (``.dyn-inspect/runs/<run-id>/``).

- ``launcher``: starts the program in a child process (``python train.py``, ``-m pkg``,
  ``torchrun``) with the startup hook of ``bootstrap/`` and writes ``launcher.jsonl``;
- ``recorder`` (in the child): receives torch's structured-trace records (``tracehook``,
  every private API through ``torch_compat``) and feeds them to ``normalizers/``;
- ``importer``: the same normalizers over a TORCH_TRACE file, for logs from elsewhere;
- ``schema``: the event kinds; ``eventlog``: the log files and the blob store.

The engine never imports the inspector or a face: data flows one way, through the log.
"""
