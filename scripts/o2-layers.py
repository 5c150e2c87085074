#!/usr/bin/env python3
"""The module's layers, measured from its objects' symbol tables.

usage: o2-layers.py [--graph] MODULE_DIR

Reads module/*.o (built by `make module`) with nm: a file calls another
when it has an undefined symbol that the other defines (a function or a
variable).  Checks the layering docs/ARCHITECTURE.md describes:

  root   main                       load and unload; may call anything
  lnet   lnet bulk selftest router  LNet: NIs' sends, credits, health, ping,
         ctl                        bulk, selftest, routing, the ioctls
  lnd    cm conn connd dev mr peer  the transport: CM, connections, connd,
         rx tx                      devices, MRs, tx/rx, the shared objects
  pure   credits fault nid params   no verbs, no LNet: KUnit drives them
         route state trace wire

Rules: lnd calls neither lnet nor root (it reaches up only through the
o2_up table and a tx's done callback, which are pointers, not symbols);
pure calls only pure; nothing calls root.  Prints each violation and exits
1; with --graph, prints the file graph and its cycles (strongly connected
components) first.  An object of module/ in no layer is a violation too:
a new file must be placed.
"""
import collections
import glob
import os
import subprocess
import sys

LAYERS = {
    "root": {"main"},
    "lnet": {"lnet", "bulk", "selftest", "router", "ctl"},
    "lnd": {"cm", "conn", "connd", "dev", "mr", "peer", "rx", "tx"},
    "pure": {"credits", "fault", "nid", "params", "route", "state", "trace",
             "wire"},
}
# which layers each layer may call (besides itself)
MAY_CALL = {
    "root": {"lnet", "lnd", "pure"},
    "lnet": {"lnd", "pure"},
    "lnd": {"pure"},
    "pure": set(),
}


def layer_of(name):
    for layer, files in LAYERS.items():
        if name in files:
            return layer
    return None


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
    objs = sorted(glob.glob(os.path.join(args[0], "module", "*.o")))
    objs = [o for o in objs if not o.endswith(".mod.o")]
    if not objs:
        print(f"o2-layers: no module/*.o under {args[0]} (make module first)",
              file=sys.stderr)
        return 2
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
            print(f"o2-layers: module/{n}.c is in no layer "
                  "(scripts/o2-layers.py)")
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
