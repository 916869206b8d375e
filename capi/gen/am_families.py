#!/usr/bin/env python3
"""Write include/gasnetex.h: gen/head.h, the AM families, gen/tail.h.

The families gex_AM_{Request,Reply}{Short,Medium,Long}N and
gex_AM_Commit{Request,Reply}{Medium,Long}N for N = 0..16 are static inline
functions over one library entry point per category, plus the
count-inferred forms (gex_AM_RequestShort(tm, rank, h, flags, a0, a1)).
Run after editing head.h or tail.h (an optional argument writes elsewhere);
the test capi/tests/header.rs checks include/gasnetex.h is current.
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
     "gasnetc_AM_Commit(sd, handler, nbytes, 0, 0, %d, gasnetc_a);"),
    ("CommitReplyMedium", "gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes", "void",
     "gasnetc_AM_Commit(sd, handler, nbytes, 0, 1, %d, gasnetc_a);"),
    ("CommitRequestLong", "gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr", "void",
     "gasnetc_AM_Commit(sd, handler, nbytes, dest_addr, 2, %d, gasnetc_a);"),
    ("CommitReplyLong", "gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr", "void",
     "gasnetc_AM_Commit(sd, handler, nbytes, dest_addr, 3, %d, gasnetc_a);"),
]


def families():
    out = []
    for name, params, ret, body in FAMILIES:
        base = "gex_AM_" + name
        out.append(f"/* {base}0 .. {base}16 */")
        for n in range(N):
            typed = "".join(f", gex_AM_Arg_t a{i}" for i in range(n))
            if n == 0:
                arr = "    const gex_AM_Arg_t *gasnetc_a = 0;\n"
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


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    head = open(os.path.join(here, "head.h")).read()
    tail = open(os.path.join(here, "tail.h")).read()
    text = head + families() + tail
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "include", "gasnetex.h")
    open(out, "w").write(text)


if __name__ == "__main__":
    main()
