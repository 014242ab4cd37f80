#!/usr/bin/python3
"""Renders chat templates exactly as Hugging Face transformers' apply_chat_template does
(transformers/utils/chat_template_utils.py: _compile_jinja_template and render_jinja_template),
with Debian's python3-jinja2: the independent reference for exspec's Jinja interpreter.

stdin:  {"cases": [{"template": str, "vars": {...}, "now": unix_seconds}, ...]}
stdout: [{"text": str} | {"error": str, "raised": bool}, ...] in the same order.
`vars` holds what apply_chat_template passes: messages, tools, documents, add_generation_prompt,
the special tokens and any extra keyword arguments. strftime_now formats `now` in UTC (exspec
pins one instant per request instead of reading the clock).
"""
import json
import sys
from datetime import datetime, timezone

import jinja2
from jinja2 import nodes
from jinja2.ext import Extension
from jinja2.sandbox import ImmutableSandboxedEnvironment


class Raised(Exception):
    pass


def compile_template(source, now):
    class AssistantTracker(Extension):
        tags = {"generation"}

        def parse(self, parser):
            lineno = next(parser.stream).lineno
            body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
            return nodes.CallBlock(self.call_method("_generation_support"), [], [], body).set_lineno(lineno)

        @jinja2.pass_eval_context
        def _generation_support(self, context, caller):
            return caller()

    def raise_exception(message):
        raise Raised(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    def strftime_now(format):
        return datetime.fromtimestamp(now, timezone.utc).strftime(format)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[AssistantTracker, jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env.from_string(source)


def main():
    cases = json.load(sys.stdin)["cases"]
    out = []
    for c in cases:
        try:
            t = compile_template(c["template"], c.get("now", 0))
            out.append({"text": t.render(**c["vars"])})
        except Raised as e:
            out.append({"error": str(e), "raised": True})
        except Exception as e:  # noqa: BLE001 - every template error is an answer here
            out.append({"error": f"{type(e).__name__}: {e}", "raised": False})
    json.dump(out, sys.stdout, ensure_ascii=False)


if __name__ == "__main__":
    main()
