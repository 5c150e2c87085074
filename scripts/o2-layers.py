#!/usr/bin/env python3
"""The module's layers, measured from its objects' symbol tables.

usage: o2-layers.py [--graph] MODULE_DIR

The layer of a file is its folder, as docs/design/architecture.md describes:

  root   module/main.c     load and unload; may call anything
  lnet   module/lnet/      LNet: NIs, sends and credits, health, ping, bulk,
                           selftest, routing, the views and the ioctls
  lnd    module/lnd/       the transport: CM, connections, connd, devices,
                           MRs, tx/rx, the peer table both layers share,
                           the NI's listener
  lustre module/lustre/    the transport under Lustre's own LNet
                           (o2lnd_lustre.ko, built apart against a Lustre
                           build: scripts/o2l-build.sh); only its includes
                           are checked here
  pure   module/*.c        no verbs, no LNet: KUnit drives them (credits
                           fault nid params route state trace wire)

Calls: reads the built objects (MODULE_DIR/module/**/*.o, made by `make
module`) with nm: a file calls another when it has an undefined symbol
that the other defines (a function or a variable).  Includes: reads each
source's #include "..." lines (MODULE_DIR/module/**/*.[ch]).

Rules: lnd calls neither lnet nor root (it reaches up only through the
o2_up table and a tx's done callback, which are pointers, not symbols);
pure calls only pure; nothing calls root.  A file includes only headers
of its own layer or of the layers it may call (lnd never includes lnet.h;
a pure unit includes only pure headers).  No cycle of calls spans two
layers.  Prints each violation and exits 1; with --graph, prints the file
graph and its cycles (strongly connected components) first.
"""
import collections
import re
import glob
import os
import subprocess
import sys

# a file's layer is its folder under module/
FOLDERS = {"": "pure", "lnet": "lnet", "lnd": "lnd", "lustre": "lustre"}
ROOT = {"main"}
# which layers each layer may call (besides itself)
MAY_CALL = {
    "root": {"lnet", "lnd", "pure"},
    "lnet": {"lnd", "pure"},
    "lnd": {"pure"},
    "lustre": {"lnd", "pure"},
    "pure": set(),
}


LAYER = {}


def path_layer(path, moddir):
    """The layer of the file at @path: its folder, main.c being root."""
    rel = os.path.relpath(path, moddir)
    folder = os.path.dirname(rel)
    name = os.path.basename(rel).rsplit(".", 1)[0]
    if folder == "" and name in ROOT:
        return "root"
    return FOLDERS.get(folder)


def place(path, moddir):
    """Record the layer of the file at @path; return its name."""
    name = os.path.basename(path).rsplit(".", 1)[0]
    LAYER[name] = path_layer(path, moddir)
    return name


def layer_of(name):
    return LAYER.get(name)


def read_includes(moddir):
    """(file, header) pairs of every #include "..." in the module's sources."""
    out = []
    for path in sorted(glob.glob(os.path.join(moddir, "**", "*.[ch]"),
                                 recursive=True)):
        with open(path, encoding="utf-8") as f:
            for line in f:
                m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
                if m:
                    out.append((path, os.path.basename(m.group(1))))
    return out


def header_layer(header, moddir):
    for folder, layer in FOLDERS.items():
        if os.path.exists(os.path.join(moddir, folder, header)):
            return layer
    return None     # generated (o2_probes.h) or the kernel's


def read_graph(objs):
    defs, uses = {}, collections.defaultdict(set)
    for obj in objs:
        name = os.path.basename(obj)[:-2]
        out = subprocess.run(["nm", obj], capture_output=True, text=True,
                             check=True).stdout
        for line in out.splitlines():
            f = line.split()
            if len(f) == 3 and f[1] in "TDBR":
                defs[f[2]] = name
            elif len(f) == 2 and f[0] == "U":
                uses[name].add(f[1])
    edges = collections.defaultdict(lambda: collections.defaultdict(set))
    for name, syms in uses.items():
        for sym in syms:
            if sym in defs and defs[sym] != name:
                edges[name][defs[sym]].add(sym)
    return sorted({os.path.basename(o)[:-2] for o in objs}), edges


def cycles(nodes, edges):
    """Tarjan's strongly connected components of more than one file."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, {})):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in nodes:
        if v not in index:
            visit(v)
    return out


def main(argv):
    graph = "--graph" in argv
    args = [a for a in argv if a != "--graph"]
    if len(args) != 1:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    moddir = os.path.join(args[0], "module")
    objs = sorted(glob.glob(os.path.join(moddir, "**", "*.o"),
                            recursive=True))
    objs = [o for o in objs if not o.endswith(".mod.o")]
    if not objs:
        print(f"o2-layers: no module/**/*.o under {args[0]} "
              "(make module first)", file=sys.stderr)
        return 2
    for o in objs:
        place(o, moddir)
    includes = read_includes(moddir)
    nodes, edges = read_graph(objs)
    if graph:
        for n in nodes:
            calls = " ".join(sorted(edges.get(n, {})))
            print(f"{layer_of(n) or '?':5} {n:8} -> {calls}")
        for comp in cycles(nodes, edges):
            layers = sorted({layer_of(n) or "?" for n in comp})
            print(f"cycle ({', '.join(layers)}): {' '.join(comp)}")
    bad = 0
    for n in nodes:
        if layer_of(n) is None:
            print(f"o2-layers: {n}.c is in no layer's folder "
                  "(scripts/o2-layers.py)")
            bad += 1
    for path, header in includes:
        rel = os.path.relpath(path, moddir)
        src = path_layer(path, moddir)
        dst = header_layer(header, moddir)
        if src is None or dst is None or dst == src:
            continue
        if dst not in MAY_CALL[src]:
            print(f"o2-layers: {rel} ({src}) includes {header} ({dst})")
            bad += 1
    for n in nodes:
        src = layer_of(n)
        for m, syms in sorted(edges.get(n, {}).items()):
            dst = layer_of(m)
            if src is None or dst is None or dst == src:
                continue
            if dst not in MAY_CALL[src]:
                print(f"o2-layers: {n} ({src}) calls {m} ({dst}): "
                      f"{' '.join(sorted(syms))}")
                bad += 1
    for comp in cycles(nodes, edges):
        if len({layer_of(n) for n in comp}) > 1:
            print(f"o2-layers: a cycle across layers: {' '.join(comp)}")
            bad += 1
    if bad:
        return 1
    if graph:
        print(f"o2-layers: {len(nodes)} files, no call against the layers")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
