"""Read API: open a run, follow it, and the model and analyses every face reads."""
