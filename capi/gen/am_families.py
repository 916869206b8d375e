#!/usr/bin/env python3
"""Regenerate the AM families regions of include/gasnetex.h and include/gasnet.h.

The families gex_AM_{Request,Reply}{Short,Medium,Long}N and
gex_AM_Commit{Request,Reply}{Medium,Long}N for N = 0..16 are static inline
functions over one library entry point per category, plus the
count-inferred forms (gex_AM_RequestShort(tm, rank, h, flags, a0, a1)).
gasnet.h's region holds GASNet-1's gasnet_AM{Request,Reply}{Short,Medium,
Long}N and gasnet_AMRequestLongAsyncN as macros over them on the
primordial team. The rest of each header is written by hand; the region
between the BEGIN and END markers is replaced. Run after changing FAMILIES
or LEGACY (optional arguments write gasnetex.h and gasnet.h elsewhere
instead of in place); the test capi/tests/header.rs checks both are
current.
"""
import os
import sys

N = 17
FAMILIES = [
    ("RequestShort", "gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, gex_Flags_t flags", "int",
     "return gasnetc_AM_RequestShort(tm, rank, handler, flags, %d, gasnetc_a);"),
    ("ReplyShort", "gex_Token_t token, gex_AM_Index_t handler, gex_Flags_t flags", "int",
     "return gasnetc_AM_ReplyShort(token, handler, flags, %d, gasnetc_a);"),
    ("RequestMedium", "gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, const void *source_addr, "
     "size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags", "int",
     "return gasnetc_AM_RequestMedium(tm, rank, handler, source_addr, nbytes, lc_opt, flags, %d, gasnetc_a);"),
    ("ReplyMedium", "gex_Token_t token, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, "
     "gex_Event_t *lc_opt, gex_Flags_t flags", "int",
     "return gasnetc_AM_ReplyMedium(token, handler, source_addr, nbytes, lc_opt, flags, %d, gasnetc_a);"),
    ("RequestLong", "gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, const void *source_addr, "
     "size_t nbytes, void *dest_addr, gex_Event_t *lc_opt, gex_Flags_t flags", "int",
     "return gasnetc_AM_RequestLong(tm, rank, handler, source_addr, nbytes, dest_addr, lc_opt, flags, %d, gasnetc_a);"),
    ("ReplyLong", "gex_Token_t token, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, "
     "void *dest_addr, gex_Event_t *lc_opt, gex_Flags_t flags", "int",
     "return gasnetc_AM_ReplyLong(token, handler, source_addr, nbytes, dest_addr, lc_opt, flags, %d, gasnetc_a);"),
    ("CommitRequestMedium", "gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes", "void",
     "gasnetc_AM_Commit(sd, handler, nbytes, NULL, 0, %d, gasnetc_a);"),
    ("CommitReplyMedium", "gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes", "void",
     "gasnetc_AM_Commit(sd, handler, nbytes, NULL, 1, %d, gasnetc_a);"),
    ("CommitRequestLong", "gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr", "void",
     "gasnetc_AM_Commit(sd, handler, nbytes, dest_addr, 2, %d, gasnetc_a);"),
    ("CommitReplyLong", "gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr", "void",
     "gasnetc_AM_Commit(sd, handler, nbytes, dest_addr, 3, %d, gasnetc_a);"),
]

# GASNet-1 name, its fixed parameters, the GASNet-EX family and what goes
# before the arguments in its call.
LEGACY = [
    ("AMRequestShort", "dest, handler", "RequestShort", "GASNETC_TM1, dest, handler, 0"),
    ("AMRequestMedium", "dest, handler, source_addr, nbytes", "RequestMedium",
     "GASNETC_TM1, dest, handler, source_addr, nbytes, GEX_EVENT_NOW, 0"),
    ("AMRequestLong", "dest, handler, source_addr, nbytes, dest_addr", "RequestLong",
     "GASNETC_TM1, dest, handler, source_addr, nbytes, dest_addr, GEX_EVENT_NOW, 0"),
    ("AMRequestLongAsync", "dest, handler, source_addr, nbytes, dest_addr", "RequestLong",
     "GASNETC_TM1, dest, handler, source_addr, nbytes, dest_addr, GEX_EVENT_NOW, 0"),
    ("AMReplyShort", "token, handler", "ReplyShort", "token, handler, 0"),
    ("AMReplyMedium", "token, handler, source_addr, nbytes", "ReplyMedium",
     "token, handler, source_addr, nbytes, GEX_EVENT_NOW, 0"),
    ("AMReplyLong", "token, handler, source_addr, nbytes, dest_addr", "ReplyLong",
     "token, handler, source_addr, nbytes, dest_addr, GEX_EVENT_NOW, 0"),
]


def legacy():
    out = []
    for name, params, ex, pre in LEGACY:
        out.append(f"/* gasnet_{name}0 .. gasnet_{name}16 */")
        for n in range(N):
            if n == 0:
                out.append(f"#define gasnet_{name}0({params}) gex_AM_{ex}0({pre})")
            else:
                out.append(f"#define gasnet_{name}{n}({params}, ...) gex_AM_{ex}{n}({pre}, __VA_ARGS__)")
        out.append("")
    return "\n".join(out)


def families():
    out = []
    for name, params, ret, body in FAMILIES:
        base = "gex_AM_" + name
        out.append(f"/* {base}0 .. {base}16 */")
        for n in range(N):
            typed = "".join(f", gex_AM_Arg_t a{i}" for i in range(n))
            if n == 0:
                arr = "    const gex_AM_Arg_t *gasnetc_a = NULL;\n"
            else:
                arr = "    const gex_AM_Arg_t gasnetc_a[%d] = {%s};\n" % (n, ", ".join(f"a{i}" for i in range(n)))
            out.append(f"GASNETT_INLINE({base}{n})\n{ret} {base}{n}({params}{typed}) {{\n{arr}    {body % n}\n}}")
        fixed = params.count(",") + 1
        picks = (["gasnetc_AM_too_many_arguments"] * (23 - fixed)
                 + [f"{base}{n}" for n in range(16, -1, -1)]
                 + ["gasnetc_AM_too_few_arguments"])
        out.append(f"#define {base}(...) GASNETC_AT40(__VA_ARGS__, {', '.join(picks)})(__VA_ARGS__)")
        out.append("")
    return "\n".join(out)


BEGIN = "/* BEGIN AM FAMILIES: generated by capi/gen/am_families.py; edit the generator, not this region */\n"
END = "/* END AM FAMILIES */\n"


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    for i, (header, region) in enumerate([("gasnetex.h", families), ("gasnet.h", legacy)]):
        path = os.path.join(here, "..", "include", header)
        text = open(path).read()
        start = text.index(BEGIN) + len(BEGIN)
        end = text.index(END)
        text = text[:start] + region() + text[end:]
        out = sys.argv[1 + i] if len(sys.argv) > 1 + i else path
        open(out, "w").write(text)


if __name__ == "__main__":
    main()
