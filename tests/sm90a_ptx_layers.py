#!/usr/bin/env python3
"""sm90a_ptx_layers.py -- checks the layering of tools/sm90a_ptx: the package docstring lists
its modules in dependency order, every module file is listed, and each module imports only
modules listed before it (no cycles, so the order is the reading order).  Exit 0 or 1."""
import ast
import os
import re
import sys

PKG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools", "sm90a_ptx")


def main():
    doc = ast.get_docstring(ast.parse(open(os.path.join(PKG, "__init__.py")).read()))
    body = doc.split("in dependency order:", 1)[1]
    order = re.findall(r"(?:^|[\s,(])([a-z_0-9]+)(?= \(|,|$)", body.split(".  Each")[0].replace("\n", " "))
    order = [m for m in order if os.path.exists(os.path.join(PKG, m + ".py"))]
    files = sorted(f[:-3] for f in os.listdir(PKG) if f.endswith(".py") and f != "__init__.py")
    bad = []
    if sorted(order) != files:
        bad.append(f"__init__ lists {order}, the package holds {files}")
    for i, mod in enumerate(order):
        tree = ast.parse(open(os.path.join(PKG, mod + ".py")).read())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                deps = [node.module] if node.module else [a.name for a in node.names]
                for d in deps:
                    if d not in order[:i]:
                        bad.append(f"{mod}.py imports {d}, which is not listed before it")
    for b in bad:
        print("sm90a_ptx_layers:", b)
    print(f"sm90a_ptx_layers: {'FAIL' if bad else 'PASS'}, {len(order)} modules")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
