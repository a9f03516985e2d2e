#!/usr/bin/env python3
"""gen_abi.py -- the generated parts of ptx/ABI.md, read from the kernels themselves.

Parses the `.entry` declaration of every ptx/<arch>/*.ptx (parameter names, PTX types,
sizes, alignments; .maxntid; .version and .target; the shared-memory total of the
kernel's header), groups the entries into families (arch, family, cluster), checks that
every instance of a family declares the same parameters, and writes

  - the table of built instantiations            (ABI.md, between gen_abi:instances markers)
  - one parameter table per family, with the     (ABI.md, between gen_abi:params markers)
    offsets of a packed parameter buffer
  - the kernel ABI digest                        (ABI.md gen_abi:digest, host/fp4lr.h FP4LR_KERNEL_ABI)

    tools/gen_abi.py --write          rewrite those parts of ptx/ABI.md and host/fp4lr.h
    tools/gen_abi.py --check          regenerate in memory; exit 1 on any difference (a test runs it)
    tools/gen_abi.py --check --cubin-dir build/ptx
                                      also check the layout against the built cubins
    tools/gen_abi.py --params KEY     print one family's packed layout, "name offset bytes" per
                                      line then "total BYTES" (KEY e.g. sm90a_fused_c1)
    tools/gen_abi.py --families       print the family keys

Offsets are those of a packed parameter buffer (CU_LAUNCH_PARAM_BUFFER_POINTER), i.e. of the
kernel's parameter area in constant bank 0: each parameter starts at the next multiple of its
alignment (.align N when given, else the element size), counted from where ptxas places the
first one (PARAM_BASE below).  --cubin-dir reads each cubin's EIATTR_KPARAM_INFO and
EIATTR_CBANK_PARAM_SIZE records and fails unless they agree.
"""
import argparse
import difflib
import glob
import hashlib
import os
import re
import struct
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ABI_MD = os.path.join(ROOT, "ptx", "ABI.md")
HEADER = os.path.join(ROOT, "host", "fp4lr.h")

ENTRY_NAME = re.compile(r"^fp4lr_(sm\d+[af])_(nvfp4|mxfp4)_(dense|fused)_m(\d+)n(\d+)k(\d+)_c(\d+)_s(\d+)(_t3|_w\d+|_x\d+)?(_yt)?(_pp)?$")
# the W preparation kernels of the W-prepared (_w) sm_90a kernels (_pdl: releasing their
# programmatic dependent, the _w<n>_yt kernels, at their start): family "wprep"
PREP_NAME = re.compile(r"^fp4lr_(sm\d+[af])_(nvfp4|mxfp4)_(wprep)(?:_pdl)?$")
PARAM = re.compile(r"^\s*\.param\s+(?:\.align\s+(\d+)\s+)?\.(b8|b16|b32|b64|u8|u16|u32|u64|s32|s64|f32|f64)"
                   r"\s+(\w+)(?:\[(\d+)\])?\s*,?\s*(?://\s*(.*))?$")
TYPE_BYTES = {"b8": 1, "u8": 1, "b16": 2, "u16": 2, "b32": 4, "u32": 4, "s32": 4, "f32": 4,
              "b64": 8, "u64": 8, "s64": 8, "f64": 8}
ARCH_ORDER = {"sm90a": 0, "sm100a": 1, "sm100f": 2}
# Where the parameter area starts in constant bank 0: ptxas puts the first parameter at the
# first address aligned for it from there.  On sm_90 the area starts at byte 0x210, so a
# 128-byte aligned first parameter (a tensor map) lands 112 bytes in (0x210 + 112 = 0x280) and
# an 8-byte aligned one at 0; on sm_100 the area is 128-aligned.  Checked by --cubin-dir.
PARAM_BASE = {"sm90a": 0x210, "sm100a": 0, "sm100f": 0}


def param_lead(arch, first_align):
    """Bytes from the parameter area's start to its first parameter."""
    return -PARAM_BASE[arch] % first_align
FORMAT_ORDER = {"nvfp4": 0, "mxfp4": 1}


class AbiError(Exception):
    pass


class Param:
    def __init__(self, m):
        align, self.type, self.name, count, comment = m.groups()
        self.count = int(count) if count else 1
        self.bytes = TYPE_BYTES[self.type] * self.count
        self.align = int(align) if align else TYPE_BYTES[self.type]
        self.comment = " ".join((comment or "").split())
        arr = f"[{self.count}]" if count else ""
        self.decl = f".param {'.align ' + align + ' ' if align else ''}.{self.type} {self.name}{arr}"
        self.offset = 0

    def signature(self):
        return f"{self.name}:{self.type}:{self.bytes}:{self.align}"


class Kernel:
    """One ptx file: its entry and what a launcher needs from its declaration."""

    def __init__(self, path):
        self.path = os.path.relpath(path, ROOT)
        text = open(path).read()
        m = re.search(r"^\.visible\s+\.entry\s+(\w+)\s*\(\s*$(.*?)^\s*\)", text, re.M | re.S)
        if not m:
            raise AbiError(f"{self.path}: no `.visible .entry NAME(` declaration")
        self.entry = m.group(1)
        if os.path.basename(path) != self.entry + ".ptx":
            raise AbiError(f"{self.path}: the entry is {self.entry}; the file must be named after it")
        n = ENTRY_NAME.match(self.entry) or PREP_NAME.match(self.entry)
        if not n:
            raise AbiError(f"{self.path}: entry {self.entry} does not follow "
                           "fp4lr_<arch>_<format>_<family>_m<TM>n<TN>k<TK>_c<C>_s<S>[_t3|_w<n>|_x<n>][_yt][_pp] "
                           "or fp4lr_<arch>_<format>_wprep[_pdl]")
        self.arch, self.format, self.family = n.group(1), n.group(2), n.group(3)
        # the _x kernels (W converted in the kernel) take 7 more parameters: their own family
        self.variant = "xconv" if self.family != "wprep" and (n.group(9) or "").startswith("_x") else ""
        # ... and the _yt kernels (the same parameters, bound swapped: ABI.md §4.2) theirs
        # (the _w<n>_yt kernels, the prepared plan bound swapped: "yt", the _w parameters)
        if self.family != "wprep" and n.group(10):
            self.variant += "_yt" if self.variant else "yt"
        if self.family == "wprep":
            self.tile, self.cluster, self.stages = None, 1, 0
        else:
            self.tile = tuple(int(n.group(i)) for i in (4, 5, 6))
            self.cluster, self.stages = int(n.group(7)), int(n.group(8))
        self.params = []
        for line in m.group(2).splitlines():
            if not line.strip():
                continue
            p = PARAM.match(line)
            if not p:
                raise AbiError(f"{self.path}: cannot read parameter line {line.strip()!r}")
            self.params.append(Param(p))
        if self.arch not in PARAM_BASE:
            raise AbiError(f"{self.path}: no PARAM_BASE for {self.arch} in tools/gen_abi.py")
        # aligned from the first parameter, which ptxas places at an address aligned for
        # every parameter of these kernels (at most 128), then shifted to where it sits
        offset, lead = 0, param_lead(self.arch, self.params[0].align if self.params else 1)
        for p in self.params:
            offset = (offset + p.align - 1) // p.align * p.align
            p.offset = lead + offset
            offset += p.bytes
        self.param_bytes = lead + offset
        self.version = self._directive(text, r"^\.version\s+(\S+)")
        self.target = self._directive(text, r"^\.target\s+(\S+)")
        ntid = self._directive(text, r"^\.maxntid\s+([\d,\s]+?)\s*$")
        self.threads = [int(x) for x in ntid.split(",")]
        # a compile-time cluster shape would change how the kernel must be launched
        if re.search(r"^\.(reqnctapercluster|explicitcluster)", text, re.M):
            raise AbiError(f"{self.path}: declares a compile-time cluster shape; ABI.md assumes the "
                           "cluster comes from the launch attribute")
        total = re.search(r"^//\s+total (\d+) bytes", text, re.M)
        if not total:
            raise AbiError(f"{self.path}: no '//   total N bytes' shared-memory line in its header")
        self.smem_map = int(total.group(1))

    def _directive(self, text, pattern):
        m = re.search(pattern, text, re.M)
        if not m:
            raise AbiError(f"{self.path}: no {pattern!r} directive")
        return m.group(1)

    def family_key(self):
        return f"{self.arch}_{self.family}{'_' + self.variant if self.variant else ''}_c{self.cluster}"

    def sort_key(self):
        return (ARCH_ORDER.get(self.arch, 9), self.arch, self.family, self.variant, self.cluster,
                FORMAT_ORDER[self.format], -self.stages)


def load_kernels():
    paths = sorted(glob.glob(os.path.join(ROOT, "ptx", "*", "*.ptx")))
    if not paths:
        raise AbiError("no ptx/<arch>/*.ptx files")
    return sorted((Kernel(p) for p in paths), key=Kernel.sort_key)


def families(kernels):
    """key -> instances, in document order; every instance must declare the same parameters
    and the same block shape as the first."""
    fams = {}
    for k in kernels:
        fams.setdefault(k.family_key(), []).append(k)
    for key, ks in fams.items():
        first = ks[0]
        for k in ks[1:]:
            a = [p.signature() for p in first.params]
            b = [p.signature() for p in k.params]
            if a != b:
                diff = "\n".join(difflib.unified_diff(a, b, first.entry, k.entry, lineterm=""))
                raise AbiError(f"family {key}: {k.entry} declares other parameters than {first.entry}:\n{diff}")
            if k.threads != first.threads:
                raise AbiError(f"family {key}: {k.entry} has .maxntid {k.threads}, {first.entry} {first.threads}")
    return fams


# ---- the built cubins (--cubin-dir) --------------------------------------------------------

EIATTR_KPARAM_INFO, EIATTR_CBANK_PARAM_SIZE = 0x17, 0x19


def elf_sections(data, path):
    """name -> bytes of every section of a little-endian ELF64 file."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise AbiError(f"{path}: not a little-endian ELF64 cubin")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    heads = [struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize) for i in range(shnum)]
    names = heads[shstrndx][4]
    out = {}
    for name, _type, _flags, _addr, off, size in heads:
        end = data.index(b"\0", names + name)
        out[data[names + name:end].decode()] = data[off:off + size]
    return out


def cubin_layout(path, entry):
    """(ordinal -> (offset, bytes), parameter area bytes) from the entry's .nv.info records:
    EIATTR_KPARAM_INFO {u32 index, u16 ordinal, u16 offset, u32 flags: bytes at bit 18} and
    EIATTR_CBANK_PARAM_SIZE (u16).  Records are fmt, attr, then a u16 size and that many bytes
    (fmt 4) or a 2-byte value (fmt 1-3)."""
    info = elf_sections(open(path, "rb").read(), path).get(".nv.info." + entry)
    if info is None:
        raise AbiError(f"{path}: no .nv.info.{entry} section")
    params, area, i = {}, None, 0
    while i + 4 <= len(info):
        fmt, attr = info[i], info[i + 1]
        if fmt == 4:
            size, = struct.unpack_from("<H", info, i + 2)
            value, i = info[i + 4:i + 4 + size], i + 4 + size
        else:
            value, i = info[i + 2:i + 4], i + 4
        if attr == EIATTR_KPARAM_INFO and fmt == 4:
            _index, ordinal, offset, flags = struct.unpack("<IHHI", value)
            params[ordinal] = (offset, (flags >> 18) & 0x3FFF)
        elif attr == EIATTR_CBANK_PARAM_SIZE:
            area, = struct.unpack("<H", value)
    return params, area


def check_cubins(kernels, cubin_dir):
    """Every kernel's computed layout against its cubin's."""
    errors = []
    for k in kernels:
        path = os.path.join(cubin_dir, k.arch, k.entry + ".cubin")
        if not os.path.exists(path):
            errors.append(f"{path}: missing (build the cubins first: make cubins)")
            continue
        params, area = cubin_layout(path, k.entry)
        want = {i: (p.offset, p.bytes) for i, p in enumerate(k.params)}
        if params != want:
            diff = [f"  {k.params[i].name if i < len(k.params) else i}: cubin {params.get(i)}, "
                    f"ABI {want.get(i)}" for i in sorted(set(params) | set(want)) if params.get(i) != want.get(i)]
            errors.append(f"{path}: parameter (offset, bytes) differ:\n" + "\n".join(diff[:4]) +
                          (f"\n  ... {len(diff) - 4} more" if len(diff) > 4 else ""))
        if area != k.param_bytes:
            errors.append(f"{path}: parameter area {area} bytes, ABI {k.param_bytes}")
    return errors


def digest(fams):
    text = "\n".join(f"{key}: " + ",".join(p.signature() for p in ks[0].params) for key, ks in sorted(fams.items()))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def cell(s):
    return s.replace("|", "\\|")


def instances_section(kernels):
    out = ["| entry | block | cluster | kernel smem map (B) | PTX ISA | target |",
           "|---|---|---|---|---|---|"]
    for k in kernels:
        out.append(f"| `{k.entry}` | {k.threads[0]} | {k.cluster} | {k.smem_map} | {k.version} | {k.target} |")
    return "\n".join(out)


def family_instances(ks):
    """"nvfp4 S = 4, 3, 2; mxfp4 S = 5": the stage counts built per format."""
    by_fmt = {}
    for k in ks:
        by_fmt.setdefault(k.format, []).append(str(k.stages))
    return "; ".join(f"{fmt} S = {', '.join(s)}" for fmt, s in by_fmt.items())


def comment_cell(ks, i):
    """The kernels' own comment on parameter i; where the formats differ, each one's."""
    by_fmt = {}
    for k in ks:
        by_fmt.setdefault(k.params[i].comment, []).append(k.format)
    if len(by_fmt) == 1:
        return cell(next(iter(by_fmt)))
    parts = []
    for comment, fmts in by_fmt.items():
        fs = "/".join(sorted(set(fmts), key=FORMAT_ORDER.get))
        parts.append(f"{fs}: {comment}")
    return cell("; ".join(parts))


def params_section(fams):
    out = []
    for key, ks in fams.items():
        k = ks[0]
        out.append(f"#### `{key}`: {k.arch} {k.family}, cluster {k.cluster}, block {k.threads[0]}")
        out.append("")
        if k.tile:
            xnote = (" W converted in the kernel (`_x<n>`, §4.2)." if k.variant.startswith("xconv") else
                     " W prepared, bound swapped (`_w<n>_yt`, §4.3)." if k.variant else "")
            by_tile = {}
            for x in ks:   # the same parameters at every tile width (the narrow _yt tile: 160)
                by_tile.setdefault(x.tile, []).append(x)
            out.append("; ".join(f"Tile {t[0]}x{t[1]}x{t[2]}: built {family_instances(xs)}"
                                 for t, xs in sorted(by_tile.items(), key=lambda kv: -kv[0][1])) + f".{xnote}")
        else:
            out.append(f"The W preparation of the `_w` kernels (§4.1; `_wprep_pdl`: §4.3); built: "
                       f"{', '.join(x.entry.split('_', 2)[2] for x in ks)}.")
        out.append("")
        out.append("| # | parameter | PTX declaration | bytes | align | offset | the kernel's comment |")
        out.append("|---|---|---|---|---|---|---|")
        for i, p in enumerate(k.params):
            out.append(f"| {i} | `{p.name}` | `{p.decl}` | {p.bytes} | {p.align} | {p.offset} | {comment_cell(ks, i)} |")
        out.append("")
        out.append(f"Packed parameter buffer: {k.param_bytes} bytes, {len(k.params)} parameters.")
        out.append("")
    return "\n".join(out).rstrip()


def digest_section(fams):
    return (f"Kernel ABI digest: `{digest(fams)}` (`FP4LR_KERNEL_ABI` in `host/fp4lr.h`; sha256 of every "
            f"family's parameter names, types, sizes and alignments, first 16 hex digits).")


def sections(kernels, fams):
    return {"instances": instances_section(kernels), "params": params_section(fams),
            "digest": digest_section(fams)}


def marker(name):
    return re.compile(r"(<!-- gen_abi:%s -->\n)(.*?)(<!-- /gen_abi:%s -->)" % (name, name), re.S)


def render_md(md, secs):
    for name, body in secs.items():
        rx = marker(name)
        if not rx.search(md):
            raise AbiError(f"ptx/ABI.md has no <!-- gen_abi:{name} --> ... <!-- /gen_abi:{name} --> block")
        md = rx.sub(lambda m: m.group(1) + body + "\n" + m.group(3), md, count=1)
    return md


HEADER_DIGEST = re.compile(r'^(#define FP4LR_KERNEL_ABI ")([0-9a-f]*)(")', re.M)


def render_header(text, dig):
    if not HEADER_DIGEST.search(text):
        raise AbiError("host/fp4lr.h has no '#define FP4LR_KERNEL_ABI \"...\"' line")
    return HEADER_DIGEST.sub(lambda m: m.group(1) + dig + m.group(3), text, count=1)


def compare(path, have, want):
    if have == want:
        return True
    rel = os.path.relpath(path, ROOT)
    sys.stdout.writelines(difflib.unified_diff(have.splitlines(True), want.splitlines(True),
                                               rel + " (committed)", rel + " (from the kernels)"))
    print(f"gen_abi: {rel} differs from the kernels; run tools/gen_abi.py --write", file=sys.stderr)
    return False


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help="rewrite the generated parts")
    mode.add_argument("--check", action="store_true", help="compare, write nothing")
    mode.add_argument("--params", metavar="KEY", help="print one family's parameter layout")
    mode.add_argument("--families", action="store_true", help="print the family keys")
    ap.add_argument("--cubin-dir", metavar="DIR", help="with --check: also compare DIR/<arch>/<entry>.cubin")
    args = ap.parse_args()
    try:
        kernels = load_kernels()
        fams = families(kernels)
        if args.families:
            print("\n".join(fams))
            return 0
        if args.params:
            if args.params not in fams:
                raise AbiError(f"no family {args.params}; families: {', '.join(fams)}")
            k = fams[args.params][0]
            for p in k.params:
                print(f"{p.name} {p.offset} {p.bytes}")
            print(f"total {k.param_bytes}")
            return 0
        md = open(ABI_MD).read()
        hdr = open(HEADER).read()
        new_md = render_md(md, sections(kernels, fams))
        new_hdr = render_header(hdr, digest(fams))
        cubin_errors = check_cubins(kernels, args.cubin_dir) if args.check and args.cubin_dir else []
    except (AbiError, OSError, struct.error, ValueError) as e:
        print(f"gen_abi: {e}", file=sys.stderr)
        return 1
    if args.write:
        for path, old, new in ((ABI_MD, md, new_md), (HEADER, hdr, new_hdr)):
            if old != new:
                open(path, "w").write(new)
                print(f"gen_abi: wrote {os.path.relpath(path, ROOT)}")
        return 0
    ok = compare(ABI_MD, md, new_md) & compare(HEADER, hdr, new_hdr)
    for e in cubin_errors:
        print(f"gen_abi: {e}", file=sys.stderr)
    if ok and not cubin_errors:
        cubins = f" and their cubins in {args.cubin_dir}" if args.cubin_dir else ""
        print(f"gen_abi: ptx/ABI.md and host/fp4lr.h match {len(kernels)} kernels in {len(fams)} families{cubins}")
    return 0 if ok and not cubin_errors else 1


if __name__ == "__main__":
    sys.exit(main())
