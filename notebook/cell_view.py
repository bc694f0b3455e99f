"""A ``CellReport`` rendered under its cell: HTML for notebook frontends (each item a
``<details>`` that opens to the user stack or the guards), plain text for terminals and
``nbconvert --to markdown``. Renders only: the report says what is shown."""

from __future__ import annotations

import jinja2

from dyn_inspect.inspector.outputs.notebook import CellReport

_HTML = jinja2.Environment(autoescape=True).from_string(
    """<div class="dyn-inspect-cell" style="font-family: var(--jp-code-font-family, monospace); font-size: 12px;">
<b>dyn-inspect</b> — {{ r.compiles }} compile{{ "s" if r.compiles != 1 }}, {{ r.graphs }} graph{{ "s" if r.graphs != 1 }}, \
{{ r.kernels }} kernel{{ "s" if r.kernels != 1 }}, compile time {{ "%.2f"|format(r.compile_time_s) }} s
{%- for f in r.failures %}
<details open><summary style="color:#c00">compile failure at <b>{{ f.where }}</b>: {{ f.headline }}</summary>
{%- if f.type %}<div>{{ f.type }}</div>{% endif %}</details>
{%- endfor %}
{%- for b in r.breaks %}
<details><summary>graph break at <b>{{ b.where }}</b>{% if b.count > 1 %} ×{{ b.count }}{% endif %}: {{ b.headline }}\
{% if b.gb_id %} {% if b.url and b.url.startswith("https://") %}<a href="{{ b.url }}">{{ b.gb_id }}</a>{% else %}{{ b.gb_id }}{% endif %}{% endif %}</summary>
{%- if b.code %}<pre style="margin:2px 0 2px 2em">{{ b.code }}</pre>{% endif %}
{%- if b.explanation %}<div style="margin-left:2em">{{ b.explanation }}</div>{% endif %}
{%- if b.user_stack %}<div style="margin-left:2em">user stack: {{ b.user_stack|join(" → ") }}</div>{% endif %}
</details>
{%- endfor %}
{%- for c in r.recompiles %}
<details><summary>recompiled <b>{{ c.function }}</b> ({{ c.where }}): {{ c.compiles }} compiles\
{% if c.limit_hit %}, recompile limit hit{% endif %}{% if c.guard %} — {{ c.guard }}{% endif %}</summary>
{%- if c.fix %}<div style="margin-left:2em">fix: <code>{{ c.fix }}</code></div>{% endif %}
{%- for g in c.guards %}<div style="margin-left:2em">guard failed: {{ g }}</div>{% endfor %}
</details>
{%- endfor %}
<div style="color:#888">run: {{ r.run }} — <code>dyn-inspect open {{ r.run }}</code></div>
</div>"""
)


def text(r: CellReport) -> str:
    s = lambda n: "" if n == 1 else "s"  # noqa: E731
    lines = [
        f"dyn-inspect: {r.compiles} compile{s(r.compiles)}, {r.graphs} graph{s(r.graphs)}, "
        f"{r.kernels} kernel{s(r.kernels)}, compile time {r.compile_time_s:.2f} s"
    ]
    for f in r.failures:
        lines.append(f"  compile failure at {f.where}: {f.headline}")
    for b in r.breaks:
        times = f" ×{b.count}" if b.count > 1 else ""
        lines.append(f"  graph break at {b.where}{times}: {b.headline}" + (f" ({b.gb_id})" if b.gb_id else ""))
        if b.code:
            lines.append(f"      {b.code}")
    for c in r.recompiles:
        limit = ", recompile limit hit" if c.limit_hit else ""
        lines.append(f"  recompiled {c.function} ({c.where}): {c.compiles} compiles{limit}" + (f" — {c.guard}" if c.guard else ""))
        if c.fix:
            lines.append(f"      fix: {c.fix}")
    lines.append(f"  run: {r.run}")
    return "\n".join(lines)


class CellView:
    """What IPython's display machinery shows: ``text/html`` and ``text/plain``."""

    def __init__(self, report: CellReport) -> None:
        self.report = report

    def _repr_html_(self) -> str:
        return _HTML.render(r=self.report)

    def __repr__(self) -> str:
        return text(self.report)
