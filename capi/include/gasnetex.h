/*
 * gasnetex.h: the GASNet-EX C API of gasnet-ofi (the SEQ library).
 *
 * Written for this project from the GASNet-EX specification (API spec
 * 0.13, GASNet-EX.txt) and GASNet-1's legacy names: the names, signatures
 * and meanings are GASNet's; the code and the constants' values are ours.
 * Link with `pkg-config --libs gasnet-ofi-seq`; run with `gasnetrun-ofi`.
 * What is provided and what is not: docs/c-api.md.
 *
 * The gex_AM_{Request,Reply}{Short,Medium,Long}N and
 * gex_AM_Commit{Request,Reply}{Medium,Long}N families (N = 0..16) are
 * static inline functions over one entry point per category; they were
 * generated with the generator in capi/gen/am_families.py.
 */
#ifndef GASNETEX_H
#define GASNETEX_H

#include <stddef.h>
#include <stdint.h>
#include <gasnet_tools.h>

GASNETT_BEGIN_EXTERNC

/* ---- configuration ------------------------------------------------------ */
#define GASNET_SEQ 1
#undef GASNET_PAR
#undef GASNET_PARSYNC
#undef GASNET_SEGMENT_EVERYTHING
#undef GASNET_DEBUG
#undef GASNET_PSHM
#define GASNET_SEGMENT_FAST 1
#define GASNET_ALIGNED_SEGMENTS 0
#define GASNET_CONDUIT_OFI 1
#define GASNET_CONDUIT_NAME OFI
#define GASNET_CONDUIT_NAME_STR "OFI"
#define GASNET_CORE_NAME OFI
#define GASNET_CORE_NAME_STR "OFI"
#define GASNET_CORE_VERSION 0.1
#define GASNET_CORE_VERSION_STR "0.1"
#define GASNET_EXTENDED_NAME OFI
#define GASNET_EXTENDED_NAME_STR "OFI"
#define GASNET_CONFIG_STRING "RELEASE=gasnet-ofi-0.1,SPEC=1.8,CONDUIT=OFI,THREADMODEL=SEQ,SEGMENT=FAST,PTR=64bit,nodebug,notrace,nostats"
#define GASNET_RELEASE_VERSION_MAJOR 2021
#define GASNET_RELEASE_VERSION_MINOR 3
#define GASNET_RELEASE_VERSION_PATCH 0
#define GEX_SPEC_VERSION_MAJOR 0
#define GEX_SPEC_VERSION_MINOR 13
#define GASNET_SPEC_VERSION_MAJOR 1
#define GASNET_SPEC_VERSION_MINOR 8
#define GASNET_MAXNODES 262143
#define GASNET_MAXEPS 1
#define GASNET_HIDDEN_AM_CONCURRENCY_LEVEL 0
#define SIZEOF_GEX_RMA_VALUE_T 8

/* ---- types ----------------------------------------------------------------- */
typedef uint32_t gex_Rank_t;
typedef uint32_t gex_Flags_t;
typedef uint32_t gex_TI_t;
typedef uint32_t gex_EC_t;
typedef uint8_t gex_AM_Index_t;
typedef int32_t gex_AM_Arg_t;
typedef uint64_t gex_RMA_Value_t;
typedef void *gex_Addr_t;
typedef struct gasnetc_Client_s *gex_Client_t;
typedef struct gasnetc_EP_s *gex_EP_t;
typedef struct gasnetc_TM_s *gex_TM_t;
typedef struct gasnetc_Segment_s *gex_Segment_t;
typedef struct gasnetc_Token_s *gex_Token_t;
typedef struct gasnetc_Event_s *gex_Event_t;
typedef struct gasnetc_SrcDesc_s *gex_AM_SrcDesc_t;
/* Handlers are registered without casts: an unprototyped pointer (in C++
 * cast to gex_AM_Fn_t, as with GASNet). */
#ifdef __cplusplus
typedef void (*gex_AM_Fn_t)();
#else
typedef void (*gex_AM_Fn_t)();
#endif

typedef struct {
    gex_AM_Index_t gex_index;  /* 0 or in [GEX_AM_INDEX_BASE .. 255] */
    gex_AM_Fn_t gex_fnptr;     /* the handler */
    gex_Flags_t gex_flags;     /* one of SHORT/MEDIUM/LONG/MEDLONG | one of REQUEST/REPLY/REQREP */
    unsigned int gex_nargs;    /* 0 .. gex_AM_MaxArgs() */
    const void *gex_cdata;     /* available to the handler (GEX_TI_ENTRY) */
    const char *gex_name;      /* used in error messages */
} gex_AM_Entry_t;

typedef struct {
    gex_Rank_t gex_srcrank;
    gex_EP_t gex_ep;
    const gex_AM_Entry_t *gex_entry;
    int gex_is_req;
    int gex_is_long;
} gex_Token_Info_t;

typedef const struct {
    gex_Rank_t gex_jobrank;
} gex_RankInfo_t;

/* A handler-safe lock. */
typedef struct {
    volatile int gasnetc_held;
    int gasnetc_reserved;
} gex_HSL_t;
#define GEX_HSL_INITIALIZER { 0, 0 }

typedef struct {
    void *addr;
    uintptr_t size;
} gasnet_seginfo_t;

/* ---- constants ------------------------------------------------------------ */
#define GEX_CLIENT_INVALID ((gex_Client_t)0)
#define GEX_EP_INVALID ((gex_EP_t)0)
#define GEX_TM_INVALID ((gex_TM_t)0)
#define GEX_SEGMENT_INVALID ((gex_Segment_t)0)
#define GEX_RANK_INVALID ((gex_Rank_t)0xFFFFFFFFu)
#define GEX_AM_SRCDESC_NO_OP ((gex_AM_SrcDesc_t)0)
#define GEX_AM_INDEX_BASE 128

#define GEX_EVENT_INVALID ((gex_Event_t)0)
#define GEX_EVENT_NO_OP ((gex_Event_t)(uintptr_t)1)
#define GEX_EVENT_NOW ((gex_Event_t *)(uintptr_t)1)
#define GEX_EVENT_DEFER ((gex_Event_t *)(uintptr_t)2)
#define GEX_EVENT_GROUP ((gex_Event_t *)(uintptr_t)3)

#define GEX_FLAG_IMMEDIATE ((gex_Flags_t)0x1)
#define GEX_FLAG_AM_PREPARE_LEAST_CLIENT ((gex_Flags_t)0x2)
#define GEX_FLAG_AM_PREPARE_LEAST_ALLOC ((gex_Flags_t)0x4)
#define GEX_FLAG_USES_GASNET1 ((gex_Flags_t)0x8)
#define GEX_FLAG_AM_SHORT ((gex_Flags_t)0x100)
#define GEX_FLAG_AM_MEDIUM ((gex_Flags_t)0x200)
#define GEX_FLAG_AM_LONG ((gex_Flags_t)0x400)
#define GEX_FLAG_AM_MEDLONG ((gex_Flags_t)0x600)
#define GEX_FLAG_AM_REQUEST ((gex_Flags_t)0x800)
#define GEX_FLAG_AM_REPLY ((gex_Flags_t)0x1000)
#define GEX_FLAG_AM_REQREP ((gex_Flags_t)0x1800)

#define GEX_TI_SRCRANK ((gex_TI_t)0x1)
#define GEX_TI_EP ((gex_TI_t)0x2)
#define GEX_TI_ENTRY ((gex_TI_t)0x4)
#define GEX_TI_IS_REQ ((gex_TI_t)0x8)
#define GEX_TI_IS_LONG ((gex_TI_t)0x10)
#define GEX_TI_ALL ((gex_TI_t)0x1f)

#define GEX_EC_GET ((gex_EC_t)0x1)
#define GEX_EC_PUT ((gex_EC_t)0x2)
#define GEX_EC_AM ((gex_EC_t)0x4)
#define GEX_EC_LC ((gex_EC_t)0x8)
#define GEX_EC_RMW ((gex_EC_t)0x10)
#define GEX_EC_ALL ((gex_EC_t)0x1f)

#define GASNET_OK 0
#define GASNET_ERR_BASE 10000
#define GASNET_ERR_NOT_INIT 10001
#define GASNET_ERR_RESOURCE 10002
#define GASNET_ERR_BAD_ARG 10003
#define GASNET_ERR_NOT_READY 10004
#define GASNET_ERR_BARRIER_MISMATCH 10005

#define GASNET_WAIT_SPIN 0
#define GASNET_WAIT_BLOCK 1
#define GASNET_WAIT_SPINBLOCK 2

#define GASNET_BARRIERFLAG_ANONYMOUS 1
#define GASNET_BARRIERFLAG_UNNAMED 4

/* ---- start-up, queries, exit -------------------------------------------- */
extern int gex_Client_Init(gex_Client_t *client_p, gex_EP_t *ep_p, gex_TM_t *tm_p,
                           const char *clientName, int *argc, char ***argv, gex_Flags_t flags);
extern int gex_Segment_Attach(gex_Segment_t *segment_p, gex_TM_t tm, uintptr_t size);
extern int gex_EP_RegisterHandlers(gex_EP_t ep, gex_AM_Entry_t *table, size_t numentries);
extern gex_Rank_t gex_TM_QueryRank(gex_TM_t tm);
extern gex_Rank_t gex_TM_QuerySize(gex_TM_t tm);
extern gex_Rank_t gex_System_QueryJobRank(void);
extern gex_Rank_t gex_System_QueryJobSize(void);
extern void gex_System_QueryMyPosition(gex_Rank_t *nbrhd_set_size, gex_Rank_t *nbrhd_set_rank,
                                       gex_Rank_t *host_set_size, gex_Rank_t *host_set_rank);
extern void gex_System_QueryHostInfo(gex_RankInfo_t **info_p, gex_Rank_t *info_count_p,
                                     gex_Rank_t *my_info_index_p);
extern gex_Event_t gex_EP_QueryBoundSegmentNB(gex_TM_t tm, gex_Rank_t rank, void **owneraddr_p,
                                              void **localaddr_p, uintptr_t *size_p,
                                              gex_Flags_t flags);
GASNETT_NORETURN extern void gasnet_exit(int exitcode) GASNETT_NORETURNP(gasnet_exit);
extern const char *gasnet_ErrorName(int errval);
extern const char *gasnet_ErrorDesc(int errval);
extern int gasnet_set_waitmode(int wait_mode);

/* ---- Active Messages ------------------------------------------------------ */
extern unsigned int gex_AM_MaxArgs(void);
extern size_t gex_AM_LUBRequestMedium(void);
extern size_t gex_AM_LUBReplyMedium(void);
extern size_t gex_AM_LUBRequestLong(void);
extern size_t gex_AM_LUBReplyLong(void);
extern size_t gex_AM_MaxRequestMedium(gex_TM_t tm, gex_Rank_t other_rank, const gex_Event_t *lc_opt,
                                      gex_Flags_t flags, unsigned int numargs);
extern size_t gex_AM_MaxReplyMedium(gex_TM_t tm, gex_Rank_t other_rank, const gex_Event_t *lc_opt,
                                    gex_Flags_t flags, unsigned int numargs);
extern size_t gex_AM_MaxRequestLong(gex_TM_t tm, gex_Rank_t other_rank, const gex_Event_t *lc_opt,
                                    gex_Flags_t flags, unsigned int numargs);
extern size_t gex_AM_MaxReplyLong(gex_TM_t tm, gex_Rank_t other_rank, const gex_Event_t *lc_opt,
                                  gex_Flags_t flags, unsigned int numargs);
extern gex_TI_t gex_Token_Info(gex_Token_t token, gex_Token_Info_t *info, gex_TI_t mask);
extern int gasnet_AMPoll(void);
#define GASNET_BLOCKUNTIL(cond) do { while (!(cond)) gasnetc_AMPoll_idle(); } while (0)

extern void gex_HSL_Init(gex_HSL_t *hsl);
extern void gex_HSL_Destroy(gex_HSL_t *hsl);
extern void gex_HSL_Lock(gex_HSL_t *hsl);
extern void gex_HSL_Unlock(gex_HSL_t *hsl);
extern int gex_HSL_Trylock(gex_HSL_t *hsl);

/* Negotiated-payload AMs. */
extern gex_AM_SrcDesc_t gex_AM_PrepareRequestMedium(gex_TM_t tm, gex_Rank_t rank, const void *client_buf,
                                                    size_t least_payload, size_t most_payload,
                                                    gex_Event_t *lc_opt, gex_Flags_t flags,
                                                    unsigned int numargs);
extern gex_AM_SrcDesc_t gex_AM_PrepareReplyMedium(gex_Token_t token, const void *client_buf,
                                                  size_t least_payload, size_t most_payload,
                                                  gex_Event_t *lc_opt, gex_Flags_t flags,
                                                  unsigned int numargs);
extern gex_AM_SrcDesc_t gex_AM_PrepareRequestLong(gex_TM_t tm, gex_Rank_t rank, const void *client_buf,
                                                  size_t least_payload, size_t most_payload,
                                                  void *dest_addr, gex_Event_t *lc_opt,
                                                  gex_Flags_t flags, unsigned int numargs);
extern gex_AM_SrcDesc_t gex_AM_PrepareReplyLong(gex_Token_t token, const void *client_buf,
                                                size_t least_payload, size_t most_payload,
                                                void *dest_addr, gex_Event_t *lc_opt,
                                                gex_Flags_t flags, unsigned int numargs);
extern void *gex_AM_SrcDescAddr(gex_AM_SrcDesc_t sd);
extern size_t gex_AM_SrcDescSize(gex_AM_SrcDesc_t sd);

/* The entry points the AM families call (not for direct use). */
extern int gasnetc_AM_RequestShort(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler,
                                   gex_Flags_t flags, unsigned int nargs, const gex_AM_Arg_t *args);
extern int gasnetc_AM_ReplyShort(gex_Token_t token, gex_AM_Index_t handler, gex_Flags_t flags,
                                 unsigned int nargs, const gex_AM_Arg_t *args);
extern int gasnetc_AM_RequestMedium(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler,
                                    const void *source_addr, size_t nbytes, gex_Event_t *lc_opt,
                                    gex_Flags_t flags, unsigned int nargs, const gex_AM_Arg_t *args);
extern int gasnetc_AM_ReplyMedium(gex_Token_t token, gex_AM_Index_t handler, const void *source_addr,
                                  size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags,
                                  unsigned int nargs, const gex_AM_Arg_t *args);
extern int gasnetc_AM_RequestLong(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler,
                                  const void *source_addr, size_t nbytes, void *dest_addr,
                                  gex_Event_t *lc_opt, gex_Flags_t flags, unsigned int nargs,
                                  const gex_AM_Arg_t *args);
extern int gasnetc_AM_ReplyLong(gex_Token_t token, gex_AM_Index_t handler, const void *source_addr,
                                size_t nbytes, void *dest_addr, gex_Event_t *lc_opt, gex_Flags_t flags,
                                unsigned int nargs, const gex_AM_Arg_t *args);
/* kind: 0 request Medium, 1 reply Medium, 2 request Long, 3 reply Long */
extern void gasnetc_AM_Commit(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes,
                              void *dest_addr, int kind, unsigned int nargs, const gex_AM_Arg_t *args);
extern void gasnetc_AMPoll_idle(void);

#define GASNETC_AT40(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, _16, _17, \
                     _18, _19, _20, _21, _22, _23, _24, _25, _26, _27, _28, _29, _30, _31, _32,   \
                     _33, _34, _35, _36, _37, _38, _39, X, ...) X

/* gex_AM_RequestShort0 .. gex_AM_RequestShort16 */
GASNETT_INLINE(gex_AM_RequestShort0)
int gex_AM_RequestShort0(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, gex_Flags_t flags) {
    const gex_AM_Arg_t *gasnetc_a = 0;
    return gasnetc_AM_RequestShort(tm, rank, handler, flags, 0, gasnetc_a);
}
GASNETT_INLINE(gex_AM_RequestShort1)
int gex_AM_RequestShort1(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, gex_Flags_t flags, gex_AM_Arg_t a0) {
    const gex_AM_Arg_t gasnetc_a[1] = {a0};
    return gasnetc_AM_RequestShort(tm, rank, handler, flags, 1, gasnetc_a);
}
GASNETT_INLINE(gex_AM_RequestShort2)
int gex_AM_RequestShort2(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1) {
    const gex_AM_Arg_t gasnetc_a[2] = {a0, a1};
    return gasnetc_AM_RequestShort(tm, rank, handler, flags, 2, gasnetc_a);
}
GASNETT_INLINE(gex_AM_RequestShort3)
int gex_AM_RequestShort3(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2) {
    const gex_AM_Arg_t gasnetc_a[3] = {a0, a1, a2};
    return gasnetc_AM_RequestShort(tm, rank, handler, flags, 3, gasnetc_a);
}
GASNETT_INLINE(gex_AM_RequestShort4)
int gex_AM_RequestShort4(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3) {
    const gex_AM_Arg_t gasnetc_a[4] = {a0, a1, a2, a3};
    return gasnetc_AM_RequestShort(tm, rank, handler, flags, 4, gasnetc_a);
}
GASNETT_INLINE(gex_AM_RequestShort5)
int gex_AM_RequestShort5(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4) {
    const gex_AM_Arg_t gasnetc_a[5] = {a0, a1, a2, a3, a4};
    return gasnetc_AM_RequestShort(tm, rank, handler, flags, 5, gasnetc_a);
}
GASNETT_INLINE(gex_AM_RequestShort6)
int gex_AM_RequestShort6(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5) {
    const gex_AM_Arg_t gasnetc_a[6] = {a0, a1, a2, a3, a4, a5};
    return gasnetc_AM_RequestShort(tm, rank, handler, flags, 6, gasnetc_a);
}
GASNETT_INLINE(gex_AM_RequestShort7)
int gex_AM_RequestShort7(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6) {
    const gex_AM_Arg_t gasnetc_a[7] = {a0, a1, a2, a3, a4, a5, a6};
    return gasnetc_AM_RequestShort(tm, rank, handler, flags, 7, gasnetc_a);
}
GASNETT_INLINE(gex_AM_RequestShort8)
int gex_AM_RequestShort8(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7) {
    const gex_AM_Arg_t gasnetc_a[8] = {a0, a1, a2, a3, a4, a5, a6, a7};
    return gasnetc_AM_RequestShort(tm, rank, handler, flags, 8, gasnetc_a);
}
GASNETT_INLINE(gex_AM_RequestShort9)
int gex_AM_RequestShort9(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8) {
    const gex_AM_Arg_t gasnetc_a[9] = {a0, a1, a2, a3, a4, a5, a6, a7, a8};
    return gasnetc_AM_RequestShort(tm, rank, handler, flags, 9, gasnetc_a);
}
GASNETT_INLINE(gex_AM_RequestShort10)
int gex_AM_RequestShort10(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9) {
    const gex_AM_Arg_t gasnetc_a[10] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9};
    return gasnetc_AM_RequestShort(tm, rank, handler, flags, 10, gasnetc_a);
}
GASNETT_INLINE(gex_AM_RequestShort11)
int gex_AM_RequestShort11(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10) {
    const gex_AM_Arg_t gasnetc_a[11] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10};
    return gasnetc_AM_RequestShort(tm, rank, handler, flags, 11, gasnetc_a);
}
GASNETT_INLINE(gex_AM_RequestShort12)
int gex_AM_RequestShort12(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11) {
    const gex_AM_Arg_t gasnetc_a[12] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11};
    return gasnetc_AM_RequestShort(tm, rank, handler, flags, 12, gasnetc_a);
}
GASNETT_INLINE(gex_AM_RequestShort13)
int gex_AM_RequestShort13(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12) {
    const gex_AM_Arg_t gasnetc_a[13] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12};
    return gasnetc_AM_RequestShort(tm, rank, handler, flags, 13, gasnetc_a);
}
GASNETT_INLINE(gex_AM_RequestShort14)
int gex_AM_RequestShort14(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12, gex_AM_Arg_t a13) {
    const gex_AM_Arg_t gasnetc_a[14] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13};
    return gasnetc_AM_RequestShort(tm, rank, handler, flags, 14, gasnetc_a);
}
GASNETT_INLINE(gex_AM_RequestShort15)
int gex_AM_RequestShort15(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12, gex_AM_Arg_t a13, gex_AM_Arg_t a14) {
    const gex_AM_Arg_t gasnetc_a[15] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14};
    return gasnetc_AM_RequestShort(tm, rank, handler, flags, 15, gasnetc_a);
}
GASNETT_INLINE(gex_AM_RequestShort16)
int gex_AM_RequestShort16(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12, gex_AM_Arg_t a13, gex_AM_Arg_t a14, gex_AM_Arg_t a15) {
    const gex_AM_Arg_t gasnetc_a[16] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15};
    return gasnetc_AM_RequestShort(tm, rank, handler, flags, 16, gasnetc_a);
}
#define gex_AM_RequestShort(...) GASNETC_AT40(__VA_ARGS__, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gex_AM_RequestShort16, gex_AM_RequestShort15, gex_AM_RequestShort14, gex_AM_RequestShort13, gex_AM_RequestShort12, gex_AM_RequestShort11, gex_AM_RequestShort10, gex_AM_RequestShort9, gex_AM_RequestShort8, gex_AM_RequestShort7, gex_AM_RequestShort6, gex_AM_RequestShort5, gex_AM_RequestShort4, gex_AM_RequestShort3, gex_AM_RequestShort2, gex_AM_RequestShort1, gex_AM_RequestShort0, gasnetc_AM_too_few_arguments)(__VA_ARGS__)

/* gex_AM_ReplyShort0 .. gex_AM_ReplyShort16 */
GASNETT_INLINE(gex_AM_ReplyShort0)
int gex_AM_ReplyShort0(gex_Token_t token, gex_AM_Index_t handler, gex_Flags_t flags) {
    const gex_AM_Arg_t *gasnetc_a = 0;
    return gasnetc_AM_ReplyShort(token, handler, flags, 0, gasnetc_a);
}
GASNETT_INLINE(gex_AM_ReplyShort1)
int gex_AM_ReplyShort1(gex_Token_t token, gex_AM_Index_t handler, gex_Flags_t flags, gex_AM_Arg_t a0) {
    const gex_AM_Arg_t gasnetc_a[1] = {a0};
    return gasnetc_AM_ReplyShort(token, handler, flags, 1, gasnetc_a);
}
GASNETT_INLINE(gex_AM_ReplyShort2)
int gex_AM_ReplyShort2(gex_Token_t token, gex_AM_Index_t handler, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1) {
    const gex_AM_Arg_t gasnetc_a[2] = {a0, a1};
    return gasnetc_AM_ReplyShort(token, handler, flags, 2, gasnetc_a);
}
GASNETT_INLINE(gex_AM_ReplyShort3)
int gex_AM_ReplyShort3(gex_Token_t token, gex_AM_Index_t handler, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2) {
    const gex_AM_Arg_t gasnetc_a[3] = {a0, a1, a2};
    return gasnetc_AM_ReplyShort(token, handler, flags, 3, gasnetc_a);
}
GASNETT_INLINE(gex_AM_ReplyShort4)
int gex_AM_ReplyShort4(gex_Token_t token, gex_AM_Index_t handler, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3) {
    const gex_AM_Arg_t gasnetc_a[4] = {a0, a1, a2, a3};
    return gasnetc_AM_ReplyShort(token, handler, flags, 4, gasnetc_a);
}
GASNETT_INLINE(gex_AM_ReplyShort5)
int gex_AM_ReplyShort5(gex_Token_t token, gex_AM_Index_t handler, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4) {
    const gex_AM_Arg_t gasnetc_a[5] = {a0, a1, a2, a3, a4};
    return gasnetc_AM_ReplyShort(token, handler, flags, 5, gasnetc_a);
}
GASNETT_INLINE(gex_AM_ReplyShort6)
int gex_AM_ReplyShort6(gex_Token_t token, gex_AM_Index_t handler, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5) {
    const gex_AM_Arg_t gasnetc_a[6] = {a0, a1, a2, a3, a4, a5};
    return gasnetc_AM_ReplyShort(token, handler, flags, 6, gasnetc_a);
}
GASNETT_INLINE(gex_AM_ReplyShort7)
int gex_AM_ReplyShort7(gex_Token_t token, gex_AM_Index_t handler, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6) {
    const gex_AM_Arg_t gasnetc_a[7] = {a0, a1, a2, a3, a4, a5, a6};
    return gasnetc_AM_ReplyShort(token, handler, flags, 7, gasnetc_a);
}
GASNETT_INLINE(gex_AM_ReplyShort8)
int gex_AM_ReplyShort8(gex_Token_t token, gex_AM_Index_t handler, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7) {
    const gex_AM_Arg_t gasnetc_a[8] = {a0, a1, a2, a3, a4, a5, a6, a7};
    return gasnetc_AM_ReplyShort(token, handler, flags, 8, gasnetc_a);
}
GASNETT_INLINE(gex_AM_ReplyShort9)
int gex_AM_ReplyShort9(gex_Token_t token, gex_AM_Index_t handler, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8) {
    const gex_AM_Arg_t gasnetc_a[9] = {a0, a1, a2, a3, a4, a5, a6, a7, a8};
    return gasnetc_AM_ReplyShort(token, handler, flags, 9, gasnetc_a);
}
GASNETT_INLINE(gex_AM_ReplyShort10)
int gex_AM_ReplyShort10(gex_Token_t token, gex_AM_Index_t handler, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9) {
    const gex_AM_Arg_t gasnetc_a[10] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9};
    return gasnetc_AM_ReplyShort(token, handler, flags, 10, gasnetc_a);
}
GASNETT_INLINE(gex_AM_ReplyShort11)
int gex_AM_ReplyShort11(gex_Token_t token, gex_AM_Index_t handler, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10) {
    const gex_AM_Arg_t gasnetc_a[11] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10};
    return gasnetc_AM_ReplyShort(token, handler, flags, 11, gasnetc_a);
}
GASNETT_INLINE(gex_AM_ReplyShort12)
int gex_AM_ReplyShort12(gex_Token_t token, gex_AM_Index_t handler, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11) {
    const gex_AM_Arg_t gasnetc_a[12] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11};
    return gasnetc_AM_ReplyShort(token, handler, flags, 12, gasnetc_a);
}
GASNETT_INLINE(gex_AM_ReplyShort13)
int gex_AM_ReplyShort13(gex_Token_t token, gex_AM_Index_t handler, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12) {
    const gex_AM_Arg_t gasnetc_a[13] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12};
    return gasnetc_AM_ReplyShort(token, handler, flags, 13, gasnetc_a);
}
GASNETT_INLINE(gex_AM_ReplyShort14)
int gex_AM_ReplyShort14(gex_Token_t token, gex_AM_Index_t handler, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12, gex_AM_Arg_t a13) {
    const gex_AM_Arg_t gasnetc_a[14] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13};
    return gasnetc_AM_ReplyShort(token, handler, flags, 14, gasnetc_a);
}
GASNETT_INLINE(gex_AM_ReplyShort15)
int gex_AM_ReplyShort15(gex_Token_t token, gex_AM_Index_t handler, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12, gex_AM_Arg_t a13, gex_AM_Arg_t a14) {
    const gex_AM_Arg_t gasnetc_a[15] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14};
    return gasnetc_AM_ReplyShort(token, handler, flags, 15, gasnetc_a);
}
GASNETT_INLINE(gex_AM_ReplyShort16)
int gex_AM_ReplyShort16(gex_Token_t token, gex_AM_Index_t handler, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12, gex_AM_Arg_t a13, gex_AM_Arg_t a14, gex_AM_Arg_t a15) {
    const gex_AM_Arg_t gasnetc_a[16] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15};
    return gasnetc_AM_ReplyShort(token, handler, flags, 16, gasnetc_a);
}
#define gex_AM_ReplyShort(...) GASNETC_AT40(__VA_ARGS__, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gex_AM_ReplyShort16, gex_AM_ReplyShort15, gex_AM_ReplyShort14, gex_AM_ReplyShort13, gex_AM_ReplyShort12, gex_AM_ReplyShort11, gex_AM_ReplyShort10, gex_AM_ReplyShort9, gex_AM_ReplyShort8, gex_AM_ReplyShort7, gex_AM_ReplyShort6, gex_AM_ReplyShort5, gex_AM_ReplyShort4, gex_AM_ReplyShort3, gex_AM_ReplyShort2, gex_AM_ReplyShort1, gex_AM_ReplyShort0, gasnetc_AM_too_few_arguments)(__VA_ARGS__)

/* gex_AM_RequestMedium0 .. gex_AM_RequestMedium16 */
GASNETT_INLINE(gex_AM_RequestMedium0)
int gex_AM_RequestMedium0(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags) {
    const gex_AM_Arg_t *gasnetc_a = 0;
    return gasnetc_AM_RequestMedium(tm, rank, handler, source_addr, nbytes, lc_opt, flags, 0, gasnetc_a);
}
GASNETT_INLINE(gex_AM_RequestMedium1)
int gex_AM_RequestMedium1(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0) {
    const gex_AM_Arg_t gasnetc_a[1] = {a0};
    return gasnetc_AM_RequestMedium(tm, rank, handler, source_addr, nbytes, lc_opt, flags, 1, gasnetc_a);
}
GASNETT_INLINE(gex_AM_RequestMedium2)
int gex_AM_RequestMedium2(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1) {
    const gex_AM_Arg_t gasnetc_a[2] = {a0, a1};
    return gasnetc_AM_RequestMedium(tm, rank, handler, source_addr, nbytes, lc_opt, flags, 2, gasnetc_a);
}
GASNETT_INLINE(gex_AM_RequestMedium3)
int gex_AM_RequestMedium3(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2) {
    const gex_AM_Arg_t gasnetc_a[3] = {a0, a1, a2};
    return gasnetc_AM_RequestMedium(tm, rank, handler, source_addr, nbytes, lc_opt, flags, 3, gasnetc_a);
}
GASNETT_INLINE(gex_AM_RequestMedium4)
int gex_AM_RequestMedium4(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3) {
    const gex_AM_Arg_t gasnetc_a[4] = {a0, a1, a2, a3};
    return gasnetc_AM_RequestMedium(tm, rank, handler, source_addr, nbytes, lc_opt, flags, 4, gasnetc_a);
}
GASNETT_INLINE(gex_AM_RequestMedium5)
int gex_AM_RequestMedium5(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4) {
    const gex_AM_Arg_t gasnetc_a[5] = {a0, a1, a2, a3, a4};
    return gasnetc_AM_RequestMedium(tm, rank, handler, source_addr, nbytes, lc_opt, flags, 5, gasnetc_a);
}
GASNETT_INLINE(gex_AM_RequestMedium6)
int gex_AM_RequestMedium6(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5) {
    const gex_AM_Arg_t gasnetc_a[6] = {a0, a1, a2, a3, a4, a5};
    return gasnetc_AM_RequestMedium(tm, rank, handler, source_addr, nbytes, lc_opt, flags, 6, gasnetc_a);
}
GASNETT_INLINE(gex_AM_RequestMedium7)
int gex_AM_RequestMedium7(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6) {
    const gex_AM_Arg_t gasnetc_a[7] = {a0, a1, a2, a3, a4, a5, a6};
    return gasnetc_AM_RequestMedium(tm, rank, handler, source_addr, nbytes, lc_opt, flags, 7, gasnetc_a);
}
GASNETT_INLINE(gex_AM_RequestMedium8)
int gex_AM_RequestMedium8(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7) {
    const gex_AM_Arg_t gasnetc_a[8] = {a0, a1, a2, a3, a4, a5, a6, a7};
    return gasnetc_AM_RequestMedium(tm, rank, handler, source_addr, nbytes, lc_opt, flags, 8, gasnetc_a);
}
GASNETT_INLINE(gex_AM_RequestMedium9)
int gex_AM_RequestMedium9(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8) {
    const gex_AM_Arg_t gasnetc_a[9] = {a0, a1, a2, a3, a4, a5, a6, a7, a8};
    return gasnetc_AM_RequestMedium(tm, rank, handler, source_addr, nbytes, lc_opt, flags, 9, gasnetc_a);
}
GASNETT_INLINE(gex_AM_RequestMedium10)
int gex_AM_RequestMedium10(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9) {
    const gex_AM_Arg_t gasnetc_a[10] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9};
    return gasnetc_AM_RequestMedium(tm, rank, handler, source_addr, nbytes, lc_opt, flags, 10, gasnetc_a);
}
GASNETT_INLINE(gex_AM_RequestMedium11)
int gex_AM_RequestMedium11(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10) {
    const gex_AM_Arg_t gasnetc_a[11] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10};
    return gasnetc_AM_RequestMedium(tm, rank, handler, source_addr, nbytes, lc_opt, flags, 11, gasnetc_a);
}
GASNETT_INLINE(gex_AM_RequestMedium12)
int gex_AM_RequestMedium12(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11) {
    const gex_AM_Arg_t gasnetc_a[12] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11};
    return gasnetc_AM_RequestMedium(tm, rank, handler, source_addr, nbytes, lc_opt, flags, 12, gasnetc_a);
}
GASNETT_INLINE(gex_AM_RequestMedium13)
int gex_AM_RequestMedium13(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12) {
    const gex_AM_Arg_t gasnetc_a[13] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12};
    return gasnetc_AM_RequestMedium(tm, rank, handler, source_addr, nbytes, lc_opt, flags, 13, gasnetc_a);
}
GASNETT_INLINE(gex_AM_RequestMedium14)
int gex_AM_RequestMedium14(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12, gex_AM_Arg_t a13) {
    const gex_AM_Arg_t gasnetc_a[14] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13};
    return gasnetc_AM_RequestMedium(tm, rank, handler, source_addr, nbytes, lc_opt, flags, 14, gasnetc_a);
}
GASNETT_INLINE(gex_AM_RequestMedium15)
int gex_AM_RequestMedium15(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12, gex_AM_Arg_t a13, gex_AM_Arg_t a14) {
    const gex_AM_Arg_t gasnetc_a[15] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14};
    return gasnetc_AM_RequestMedium(tm, rank, handler, source_addr, nbytes, lc_opt, flags, 15, gasnetc_a);
}
GASNETT_INLINE(gex_AM_RequestMedium16)
int gex_AM_RequestMedium16(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12, gex_AM_Arg_t a13, gex_AM_Arg_t a14, gex_AM_Arg_t a15) {
    const gex_AM_Arg_t gasnetc_a[16] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15};
    return gasnetc_AM_RequestMedium(tm, rank, handler, source_addr, nbytes, lc_opt, flags, 16, gasnetc_a);
}
#define gex_AM_RequestMedium(...) GASNETC_AT40(__VA_ARGS__, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gex_AM_RequestMedium16, gex_AM_RequestMedium15, gex_AM_RequestMedium14, gex_AM_RequestMedium13, gex_AM_RequestMedium12, gex_AM_RequestMedium11, gex_AM_RequestMedium10, gex_AM_RequestMedium9, gex_AM_RequestMedium8, gex_AM_RequestMedium7, gex_AM_RequestMedium6, gex_AM_RequestMedium5, gex_AM_RequestMedium4, gex_AM_RequestMedium3, gex_AM_RequestMedium2, gex_AM_RequestMedium1, gex_AM_RequestMedium0, gasnetc_AM_too_few_arguments)(__VA_ARGS__)

/* gex_AM_ReplyMedium0 .. gex_AM_ReplyMedium16 */
GASNETT_INLINE(gex_AM_ReplyMedium0)
int gex_AM_ReplyMedium0(gex_Token_t token, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags) {
    const gex_AM_Arg_t *gasnetc_a = 0;
    return gasnetc_AM_ReplyMedium(token, handler, source_addr, nbytes, lc_opt, flags, 0, gasnetc_a);
}
GASNETT_INLINE(gex_AM_ReplyMedium1)
int gex_AM_ReplyMedium1(gex_Token_t token, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0) {
    const gex_AM_Arg_t gasnetc_a[1] = {a0};
    return gasnetc_AM_ReplyMedium(token, handler, source_addr, nbytes, lc_opt, flags, 1, gasnetc_a);
}
GASNETT_INLINE(gex_AM_ReplyMedium2)
int gex_AM_ReplyMedium2(gex_Token_t token, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1) {
    const gex_AM_Arg_t gasnetc_a[2] = {a0, a1};
    return gasnetc_AM_ReplyMedium(token, handler, source_addr, nbytes, lc_opt, flags, 2, gasnetc_a);
}
GASNETT_INLINE(gex_AM_ReplyMedium3)
int gex_AM_ReplyMedium3(gex_Token_t token, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2) {
    const gex_AM_Arg_t gasnetc_a[3] = {a0, a1, a2};
    return gasnetc_AM_ReplyMedium(token, handler, source_addr, nbytes, lc_opt, flags, 3, gasnetc_a);
}
GASNETT_INLINE(gex_AM_ReplyMedium4)
int gex_AM_ReplyMedium4(gex_Token_t token, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3) {
    const gex_AM_Arg_t gasnetc_a[4] = {a0, a1, a2, a3};
    return gasnetc_AM_ReplyMedium(token, handler, source_addr, nbytes, lc_opt, flags, 4, gasnetc_a);
}
GASNETT_INLINE(gex_AM_ReplyMedium5)
int gex_AM_ReplyMedium5(gex_Token_t token, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4) {
    const gex_AM_Arg_t gasnetc_a[5] = {a0, a1, a2, a3, a4};
    return gasnetc_AM_ReplyMedium(token, handler, source_addr, nbytes, lc_opt, flags, 5, gasnetc_a);
}
GASNETT_INLINE(gex_AM_ReplyMedium6)
int gex_AM_ReplyMedium6(gex_Token_t token, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5) {
    const gex_AM_Arg_t gasnetc_a[6] = {a0, a1, a2, a3, a4, a5};
    return gasnetc_AM_ReplyMedium(token, handler, source_addr, nbytes, lc_opt, flags, 6, gasnetc_a);
}
GASNETT_INLINE(gex_AM_ReplyMedium7)
int gex_AM_ReplyMedium7(gex_Token_t token, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6) {
    const gex_AM_Arg_t gasnetc_a[7] = {a0, a1, a2, a3, a4, a5, a6};
    return gasnetc_AM_ReplyMedium(token, handler, source_addr, nbytes, lc_opt, flags, 7, gasnetc_a);
}
GASNETT_INLINE(gex_AM_ReplyMedium8)
int gex_AM_ReplyMedium8(gex_Token_t token, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7) {
    const gex_AM_Arg_t gasnetc_a[8] = {a0, a1, a2, a3, a4, a5, a6, a7};
    return gasnetc_AM_ReplyMedium(token, handler, source_addr, nbytes, lc_opt, flags, 8, gasnetc_a);
}
GASNETT_INLINE(gex_AM_ReplyMedium9)
int gex_AM_ReplyMedium9(gex_Token_t token, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8) {
    const gex_AM_Arg_t gasnetc_a[9] = {a0, a1, a2, a3, a4, a5, a6, a7, a8};
    return gasnetc_AM_ReplyMedium(token, handler, source_addr, nbytes, lc_opt, flags, 9, gasnetc_a);
}
GASNETT_INLINE(gex_AM_ReplyMedium10)
int gex_AM_ReplyMedium10(gex_Token_t token, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9) {
    const gex_AM_Arg_t gasnetc_a[10] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9};
    return gasnetc_AM_ReplyMedium(token, handler, source_addr, nbytes, lc_opt, flags, 10, gasnetc_a);
}
GASNETT_INLINE(gex_AM_ReplyMedium11)
int gex_AM_ReplyMedium11(gex_Token_t token, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10) {
    const gex_AM_Arg_t gasnetc_a[11] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10};
    return gasnetc_AM_ReplyMedium(token, handler, source_addr, nbytes, lc_opt, flags, 11, gasnetc_a);
}
GASNETT_INLINE(gex_AM_ReplyMedium12)
int gex_AM_ReplyMedium12(gex_Token_t token, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11) {
    const gex_AM_Arg_t gasnetc_a[12] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11};
    return gasnetc_AM_ReplyMedium(token, handler, source_addr, nbytes, lc_opt, flags, 12, gasnetc_a);
}
GASNETT_INLINE(gex_AM_ReplyMedium13)
int gex_AM_ReplyMedium13(gex_Token_t token, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12) {
    const gex_AM_Arg_t gasnetc_a[13] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12};
    return gasnetc_AM_ReplyMedium(token, handler, source_addr, nbytes, lc_opt, flags, 13, gasnetc_a);
}
GASNETT_INLINE(gex_AM_ReplyMedium14)
int gex_AM_ReplyMedium14(gex_Token_t token, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12, gex_AM_Arg_t a13) {
    const gex_AM_Arg_t gasnetc_a[14] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13};
    return gasnetc_AM_ReplyMedium(token, handler, source_addr, nbytes, lc_opt, flags, 14, gasnetc_a);
}
GASNETT_INLINE(gex_AM_ReplyMedium15)
int gex_AM_ReplyMedium15(gex_Token_t token, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12, gex_AM_Arg_t a13, gex_AM_Arg_t a14) {
    const gex_AM_Arg_t gasnetc_a[15] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14};
    return gasnetc_AM_ReplyMedium(token, handler, source_addr, nbytes, lc_opt, flags, 15, gasnetc_a);
}
GASNETT_INLINE(gex_AM_ReplyMedium16)
int gex_AM_ReplyMedium16(gex_Token_t token, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12, gex_AM_Arg_t a13, gex_AM_Arg_t a14, gex_AM_Arg_t a15) {
    const gex_AM_Arg_t gasnetc_a[16] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15};
    return gasnetc_AM_ReplyMedium(token, handler, source_addr, nbytes, lc_opt, flags, 16, gasnetc_a);
}
#define gex_AM_ReplyMedium(...) GASNETC_AT40(__VA_ARGS__, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gex_AM_ReplyMedium16, gex_AM_ReplyMedium15, gex_AM_ReplyMedium14, gex_AM_ReplyMedium13, gex_AM_ReplyMedium12, gex_AM_ReplyMedium11, gex_AM_ReplyMedium10, gex_AM_ReplyMedium9, gex_AM_ReplyMedium8, gex_AM_ReplyMedium7, gex_AM_ReplyMedium6, gex_AM_ReplyMedium5, gex_AM_ReplyMedium4, gex_AM_ReplyMedium3, gex_AM_ReplyMedium2, gex_AM_ReplyMedium1, gex_AM_ReplyMedium0, gasnetc_AM_too_few_arguments)(__VA_ARGS__)

/* gex_AM_RequestLong0 .. gex_AM_RequestLong16 */
GASNETT_INLINE(gex_AM_RequestLong0)
int gex_AM_RequestLong0(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, void *dest_addr, gex_Event_t *lc_opt, gex_Flags_t flags) {
    const gex_AM_Arg_t *gasnetc_a = 0;
    return gasnetc_AM_RequestLong(tm, rank, handler, source_addr, nbytes, dest_addr, lc_opt, flags, 0, gasnetc_a);
}
GASNETT_INLINE(gex_AM_RequestLong1)
int gex_AM_RequestLong1(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, void *dest_addr, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0) {
    const gex_AM_Arg_t gasnetc_a[1] = {a0};
    return gasnetc_AM_RequestLong(tm, rank, handler, source_addr, nbytes, dest_addr, lc_opt, flags, 1, gasnetc_a);
}
GASNETT_INLINE(gex_AM_RequestLong2)
int gex_AM_RequestLong2(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, void *dest_addr, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1) {
    const gex_AM_Arg_t gasnetc_a[2] = {a0, a1};
    return gasnetc_AM_RequestLong(tm, rank, handler, source_addr, nbytes, dest_addr, lc_opt, flags, 2, gasnetc_a);
}
GASNETT_INLINE(gex_AM_RequestLong3)
int gex_AM_RequestLong3(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, void *dest_addr, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2) {
    const gex_AM_Arg_t gasnetc_a[3] = {a0, a1, a2};
    return gasnetc_AM_RequestLong(tm, rank, handler, source_addr, nbytes, dest_addr, lc_opt, flags, 3, gasnetc_a);
}
GASNETT_INLINE(gex_AM_RequestLong4)
int gex_AM_RequestLong4(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, void *dest_addr, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3) {
    const gex_AM_Arg_t gasnetc_a[4] = {a0, a1, a2, a3};
    return gasnetc_AM_RequestLong(tm, rank, handler, source_addr, nbytes, dest_addr, lc_opt, flags, 4, gasnetc_a);
}
GASNETT_INLINE(gex_AM_RequestLong5)
int gex_AM_RequestLong5(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, void *dest_addr, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4) {
    const gex_AM_Arg_t gasnetc_a[5] = {a0, a1, a2, a3, a4};
    return gasnetc_AM_RequestLong(tm, rank, handler, source_addr, nbytes, dest_addr, lc_opt, flags, 5, gasnetc_a);
}
GASNETT_INLINE(gex_AM_RequestLong6)
int gex_AM_RequestLong6(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, void *dest_addr, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5) {
    const gex_AM_Arg_t gasnetc_a[6] = {a0, a1, a2, a3, a4, a5};
    return gasnetc_AM_RequestLong(tm, rank, handler, source_addr, nbytes, dest_addr, lc_opt, flags, 6, gasnetc_a);
}
GASNETT_INLINE(gex_AM_RequestLong7)
int gex_AM_RequestLong7(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, void *dest_addr, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6) {
    const gex_AM_Arg_t gasnetc_a[7] = {a0, a1, a2, a3, a4, a5, a6};
    return gasnetc_AM_RequestLong(tm, rank, handler, source_addr, nbytes, dest_addr, lc_opt, flags, 7, gasnetc_a);
}
GASNETT_INLINE(gex_AM_RequestLong8)
int gex_AM_RequestLong8(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, void *dest_addr, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7) {
    const gex_AM_Arg_t gasnetc_a[8] = {a0, a1, a2, a3, a4, a5, a6, a7};
    return gasnetc_AM_RequestLong(tm, rank, handler, source_addr, nbytes, dest_addr, lc_opt, flags, 8, gasnetc_a);
}
GASNETT_INLINE(gex_AM_RequestLong9)
int gex_AM_RequestLong9(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, void *dest_addr, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8) {
    const gex_AM_Arg_t gasnetc_a[9] = {a0, a1, a2, a3, a4, a5, a6, a7, a8};
    return gasnetc_AM_RequestLong(tm, rank, handler, source_addr, nbytes, dest_addr, lc_opt, flags, 9, gasnetc_a);
}
GASNETT_INLINE(gex_AM_RequestLong10)
int gex_AM_RequestLong10(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, void *dest_addr, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9) {
    const gex_AM_Arg_t gasnetc_a[10] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9};
    return gasnetc_AM_RequestLong(tm, rank, handler, source_addr, nbytes, dest_addr, lc_opt, flags, 10, gasnetc_a);
}
GASNETT_INLINE(gex_AM_RequestLong11)
int gex_AM_RequestLong11(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, void *dest_addr, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10) {
    const gex_AM_Arg_t gasnetc_a[11] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10};
    return gasnetc_AM_RequestLong(tm, rank, handler, source_addr, nbytes, dest_addr, lc_opt, flags, 11, gasnetc_a);
}
GASNETT_INLINE(gex_AM_RequestLong12)
int gex_AM_RequestLong12(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, void *dest_addr, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11) {
    const gex_AM_Arg_t gasnetc_a[12] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11};
    return gasnetc_AM_RequestLong(tm, rank, handler, source_addr, nbytes, dest_addr, lc_opt, flags, 12, gasnetc_a);
}
GASNETT_INLINE(gex_AM_RequestLong13)
int gex_AM_RequestLong13(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, void *dest_addr, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12) {
    const gex_AM_Arg_t gasnetc_a[13] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12};
    return gasnetc_AM_RequestLong(tm, rank, handler, source_addr, nbytes, dest_addr, lc_opt, flags, 13, gasnetc_a);
}
GASNETT_INLINE(gex_AM_RequestLong14)
int gex_AM_RequestLong14(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, void *dest_addr, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12, gex_AM_Arg_t a13) {
    const gex_AM_Arg_t gasnetc_a[14] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13};
    return gasnetc_AM_RequestLong(tm, rank, handler, source_addr, nbytes, dest_addr, lc_opt, flags, 14, gasnetc_a);
}
GASNETT_INLINE(gex_AM_RequestLong15)
int gex_AM_RequestLong15(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, void *dest_addr, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12, gex_AM_Arg_t a13, gex_AM_Arg_t a14) {
    const gex_AM_Arg_t gasnetc_a[15] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14};
    return gasnetc_AM_RequestLong(tm, rank, handler, source_addr, nbytes, dest_addr, lc_opt, flags, 15, gasnetc_a);
}
GASNETT_INLINE(gex_AM_RequestLong16)
int gex_AM_RequestLong16(gex_TM_t tm, gex_Rank_t rank, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, void *dest_addr, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12, gex_AM_Arg_t a13, gex_AM_Arg_t a14, gex_AM_Arg_t a15) {
    const gex_AM_Arg_t gasnetc_a[16] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15};
    return gasnetc_AM_RequestLong(tm, rank, handler, source_addr, nbytes, dest_addr, lc_opt, flags, 16, gasnetc_a);
}
#define gex_AM_RequestLong(...) GASNETC_AT40(__VA_ARGS__, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gex_AM_RequestLong16, gex_AM_RequestLong15, gex_AM_RequestLong14, gex_AM_RequestLong13, gex_AM_RequestLong12, gex_AM_RequestLong11, gex_AM_RequestLong10, gex_AM_RequestLong9, gex_AM_RequestLong8, gex_AM_RequestLong7, gex_AM_RequestLong6, gex_AM_RequestLong5, gex_AM_RequestLong4, gex_AM_RequestLong3, gex_AM_RequestLong2, gex_AM_RequestLong1, gex_AM_RequestLong0, gasnetc_AM_too_few_arguments)(__VA_ARGS__)

/* gex_AM_ReplyLong0 .. gex_AM_ReplyLong16 */
GASNETT_INLINE(gex_AM_ReplyLong0)
int gex_AM_ReplyLong0(gex_Token_t token, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, void *dest_addr, gex_Event_t *lc_opt, gex_Flags_t flags) {
    const gex_AM_Arg_t *gasnetc_a = 0;
    return gasnetc_AM_ReplyLong(token, handler, source_addr, nbytes, dest_addr, lc_opt, flags, 0, gasnetc_a);
}
GASNETT_INLINE(gex_AM_ReplyLong1)
int gex_AM_ReplyLong1(gex_Token_t token, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, void *dest_addr, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0) {
    const gex_AM_Arg_t gasnetc_a[1] = {a0};
    return gasnetc_AM_ReplyLong(token, handler, source_addr, nbytes, dest_addr, lc_opt, flags, 1, gasnetc_a);
}
GASNETT_INLINE(gex_AM_ReplyLong2)
int gex_AM_ReplyLong2(gex_Token_t token, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, void *dest_addr, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1) {
    const gex_AM_Arg_t gasnetc_a[2] = {a0, a1};
    return gasnetc_AM_ReplyLong(token, handler, source_addr, nbytes, dest_addr, lc_opt, flags, 2, gasnetc_a);
}
GASNETT_INLINE(gex_AM_ReplyLong3)
int gex_AM_ReplyLong3(gex_Token_t token, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, void *dest_addr, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2) {
    const gex_AM_Arg_t gasnetc_a[3] = {a0, a1, a2};
    return gasnetc_AM_ReplyLong(token, handler, source_addr, nbytes, dest_addr, lc_opt, flags, 3, gasnetc_a);
}
GASNETT_INLINE(gex_AM_ReplyLong4)
int gex_AM_ReplyLong4(gex_Token_t token, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, void *dest_addr, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3) {
    const gex_AM_Arg_t gasnetc_a[4] = {a0, a1, a2, a3};
    return gasnetc_AM_ReplyLong(token, handler, source_addr, nbytes, dest_addr, lc_opt, flags, 4, gasnetc_a);
}
GASNETT_INLINE(gex_AM_ReplyLong5)
int gex_AM_ReplyLong5(gex_Token_t token, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, void *dest_addr, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4) {
    const gex_AM_Arg_t gasnetc_a[5] = {a0, a1, a2, a3, a4};
    return gasnetc_AM_ReplyLong(token, handler, source_addr, nbytes, dest_addr, lc_opt, flags, 5, gasnetc_a);
}
GASNETT_INLINE(gex_AM_ReplyLong6)
int gex_AM_ReplyLong6(gex_Token_t token, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, void *dest_addr, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5) {
    const gex_AM_Arg_t gasnetc_a[6] = {a0, a1, a2, a3, a4, a5};
    return gasnetc_AM_ReplyLong(token, handler, source_addr, nbytes, dest_addr, lc_opt, flags, 6, gasnetc_a);
}
GASNETT_INLINE(gex_AM_ReplyLong7)
int gex_AM_ReplyLong7(gex_Token_t token, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, void *dest_addr, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6) {
    const gex_AM_Arg_t gasnetc_a[7] = {a0, a1, a2, a3, a4, a5, a6};
    return gasnetc_AM_ReplyLong(token, handler, source_addr, nbytes, dest_addr, lc_opt, flags, 7, gasnetc_a);
}
GASNETT_INLINE(gex_AM_ReplyLong8)
int gex_AM_ReplyLong8(gex_Token_t token, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, void *dest_addr, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7) {
    const gex_AM_Arg_t gasnetc_a[8] = {a0, a1, a2, a3, a4, a5, a6, a7};
    return gasnetc_AM_ReplyLong(token, handler, source_addr, nbytes, dest_addr, lc_opt, flags, 8, gasnetc_a);
}
GASNETT_INLINE(gex_AM_ReplyLong9)
int gex_AM_ReplyLong9(gex_Token_t token, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, void *dest_addr, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8) {
    const gex_AM_Arg_t gasnetc_a[9] = {a0, a1, a2, a3, a4, a5, a6, a7, a8};
    return gasnetc_AM_ReplyLong(token, handler, source_addr, nbytes, dest_addr, lc_opt, flags, 9, gasnetc_a);
}
GASNETT_INLINE(gex_AM_ReplyLong10)
int gex_AM_ReplyLong10(gex_Token_t token, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, void *dest_addr, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9) {
    const gex_AM_Arg_t gasnetc_a[10] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9};
    return gasnetc_AM_ReplyLong(token, handler, source_addr, nbytes, dest_addr, lc_opt, flags, 10, gasnetc_a);
}
GASNETT_INLINE(gex_AM_ReplyLong11)
int gex_AM_ReplyLong11(gex_Token_t token, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, void *dest_addr, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10) {
    const gex_AM_Arg_t gasnetc_a[11] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10};
    return gasnetc_AM_ReplyLong(token, handler, source_addr, nbytes, dest_addr, lc_opt, flags, 11, gasnetc_a);
}
GASNETT_INLINE(gex_AM_ReplyLong12)
int gex_AM_ReplyLong12(gex_Token_t token, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, void *dest_addr, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11) {
    const gex_AM_Arg_t gasnetc_a[12] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11};
    return gasnetc_AM_ReplyLong(token, handler, source_addr, nbytes, dest_addr, lc_opt, flags, 12, gasnetc_a);
}
GASNETT_INLINE(gex_AM_ReplyLong13)
int gex_AM_ReplyLong13(gex_Token_t token, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, void *dest_addr, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12) {
    const gex_AM_Arg_t gasnetc_a[13] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12};
    return gasnetc_AM_ReplyLong(token, handler, source_addr, nbytes, dest_addr, lc_opt, flags, 13, gasnetc_a);
}
GASNETT_INLINE(gex_AM_ReplyLong14)
int gex_AM_ReplyLong14(gex_Token_t token, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, void *dest_addr, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12, gex_AM_Arg_t a13) {
    const gex_AM_Arg_t gasnetc_a[14] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13};
    return gasnetc_AM_ReplyLong(token, handler, source_addr, nbytes, dest_addr, lc_opt, flags, 14, gasnetc_a);
}
GASNETT_INLINE(gex_AM_ReplyLong15)
int gex_AM_ReplyLong15(gex_Token_t token, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, void *dest_addr, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12, gex_AM_Arg_t a13, gex_AM_Arg_t a14) {
    const gex_AM_Arg_t gasnetc_a[15] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14};
    return gasnetc_AM_ReplyLong(token, handler, source_addr, nbytes, dest_addr, lc_opt, flags, 15, gasnetc_a);
}
GASNETT_INLINE(gex_AM_ReplyLong16)
int gex_AM_ReplyLong16(gex_Token_t token, gex_AM_Index_t handler, const void *source_addr, size_t nbytes, void *dest_addr, gex_Event_t *lc_opt, gex_Flags_t flags, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12, gex_AM_Arg_t a13, gex_AM_Arg_t a14, gex_AM_Arg_t a15) {
    const gex_AM_Arg_t gasnetc_a[16] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15};
    return gasnetc_AM_ReplyLong(token, handler, source_addr, nbytes, dest_addr, lc_opt, flags, 16, gasnetc_a);
}
#define gex_AM_ReplyLong(...) GASNETC_AT40(__VA_ARGS__, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gex_AM_ReplyLong16, gex_AM_ReplyLong15, gex_AM_ReplyLong14, gex_AM_ReplyLong13, gex_AM_ReplyLong12, gex_AM_ReplyLong11, gex_AM_ReplyLong10, gex_AM_ReplyLong9, gex_AM_ReplyLong8, gex_AM_ReplyLong7, gex_AM_ReplyLong6, gex_AM_ReplyLong5, gex_AM_ReplyLong4, gex_AM_ReplyLong3, gex_AM_ReplyLong2, gex_AM_ReplyLong1, gex_AM_ReplyLong0, gasnetc_AM_too_few_arguments)(__VA_ARGS__)

/* gex_AM_CommitRequestMedium0 .. gex_AM_CommitRequestMedium16 */
GASNETT_INLINE(gex_AM_CommitRequestMedium0)
void gex_AM_CommitRequestMedium0(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes) {
    const gex_AM_Arg_t *gasnetc_a = 0;
    gasnetc_AM_Commit(sd, handler, nbytes, 0, 0, 0, gasnetc_a);
}
GASNETT_INLINE(gex_AM_CommitRequestMedium1)
void gex_AM_CommitRequestMedium1(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_AM_Arg_t a0) {
    const gex_AM_Arg_t gasnetc_a[1] = {a0};
    gasnetc_AM_Commit(sd, handler, nbytes, 0, 0, 1, gasnetc_a);
}
GASNETT_INLINE(gex_AM_CommitRequestMedium2)
void gex_AM_CommitRequestMedium2(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_AM_Arg_t a0, gex_AM_Arg_t a1) {
    const gex_AM_Arg_t gasnetc_a[2] = {a0, a1};
    gasnetc_AM_Commit(sd, handler, nbytes, 0, 0, 2, gasnetc_a);
}
GASNETT_INLINE(gex_AM_CommitRequestMedium3)
void gex_AM_CommitRequestMedium3(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2) {
    const gex_AM_Arg_t gasnetc_a[3] = {a0, a1, a2};
    gasnetc_AM_Commit(sd, handler, nbytes, 0, 0, 3, gasnetc_a);
}
GASNETT_INLINE(gex_AM_CommitRequestMedium4)
void gex_AM_CommitRequestMedium4(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3) {
    const gex_AM_Arg_t gasnetc_a[4] = {a0, a1, a2, a3};
    gasnetc_AM_Commit(sd, handler, nbytes, 0, 0, 4, gasnetc_a);
}
GASNETT_INLINE(gex_AM_CommitRequestMedium5)
void gex_AM_CommitRequestMedium5(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4) {
    const gex_AM_Arg_t gasnetc_a[5] = {a0, a1, a2, a3, a4};
    gasnetc_AM_Commit(sd, handler, nbytes, 0, 0, 5, gasnetc_a);
}
GASNETT_INLINE(gex_AM_CommitRequestMedium6)
void gex_AM_CommitRequestMedium6(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5) {
    const gex_AM_Arg_t gasnetc_a[6] = {a0, a1, a2, a3, a4, a5};
    gasnetc_AM_Commit(sd, handler, nbytes, 0, 0, 6, gasnetc_a);
}
GASNETT_INLINE(gex_AM_CommitRequestMedium7)
void gex_AM_CommitRequestMedium7(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6) {
    const gex_AM_Arg_t gasnetc_a[7] = {a0, a1, a2, a3, a4, a5, a6};
    gasnetc_AM_Commit(sd, handler, nbytes, 0, 0, 7, gasnetc_a);
}
GASNETT_INLINE(gex_AM_CommitRequestMedium8)
void gex_AM_CommitRequestMedium8(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7) {
    const gex_AM_Arg_t gasnetc_a[8] = {a0, a1, a2, a3, a4, a5, a6, a7};
    gasnetc_AM_Commit(sd, handler, nbytes, 0, 0, 8, gasnetc_a);
}
GASNETT_INLINE(gex_AM_CommitRequestMedium9)
void gex_AM_CommitRequestMedium9(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8) {
    const gex_AM_Arg_t gasnetc_a[9] = {a0, a1, a2, a3, a4, a5, a6, a7, a8};
    gasnetc_AM_Commit(sd, handler, nbytes, 0, 0, 9, gasnetc_a);
}
GASNETT_INLINE(gex_AM_CommitRequestMedium10)
void gex_AM_CommitRequestMedium10(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9) {
    const gex_AM_Arg_t gasnetc_a[10] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9};
    gasnetc_AM_Commit(sd, handler, nbytes, 0, 0, 10, gasnetc_a);
}
GASNETT_INLINE(gex_AM_CommitRequestMedium11)
void gex_AM_CommitRequestMedium11(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10) {
    const gex_AM_Arg_t gasnetc_a[11] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10};
    gasnetc_AM_Commit(sd, handler, nbytes, 0, 0, 11, gasnetc_a);
}
GASNETT_INLINE(gex_AM_CommitRequestMedium12)
void gex_AM_CommitRequestMedium12(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11) {
    const gex_AM_Arg_t gasnetc_a[12] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11};
    gasnetc_AM_Commit(sd, handler, nbytes, 0, 0, 12, gasnetc_a);
}
GASNETT_INLINE(gex_AM_CommitRequestMedium13)
void gex_AM_CommitRequestMedium13(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12) {
    const gex_AM_Arg_t gasnetc_a[13] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12};
    gasnetc_AM_Commit(sd, handler, nbytes, 0, 0, 13, gasnetc_a);
}
GASNETT_INLINE(gex_AM_CommitRequestMedium14)
void gex_AM_CommitRequestMedium14(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12, gex_AM_Arg_t a13) {
    const gex_AM_Arg_t gasnetc_a[14] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13};
    gasnetc_AM_Commit(sd, handler, nbytes, 0, 0, 14, gasnetc_a);
}
GASNETT_INLINE(gex_AM_CommitRequestMedium15)
void gex_AM_CommitRequestMedium15(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12, gex_AM_Arg_t a13, gex_AM_Arg_t a14) {
    const gex_AM_Arg_t gasnetc_a[15] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14};
    gasnetc_AM_Commit(sd, handler, nbytes, 0, 0, 15, gasnetc_a);
}
GASNETT_INLINE(gex_AM_CommitRequestMedium16)
void gex_AM_CommitRequestMedium16(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12, gex_AM_Arg_t a13, gex_AM_Arg_t a14, gex_AM_Arg_t a15) {
    const gex_AM_Arg_t gasnetc_a[16] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15};
    gasnetc_AM_Commit(sd, handler, nbytes, 0, 0, 16, gasnetc_a);
}
#define gex_AM_CommitRequestMedium(...) GASNETC_AT40(__VA_ARGS__, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gex_AM_CommitRequestMedium16, gex_AM_CommitRequestMedium15, gex_AM_CommitRequestMedium14, gex_AM_CommitRequestMedium13, gex_AM_CommitRequestMedium12, gex_AM_CommitRequestMedium11, gex_AM_CommitRequestMedium10, gex_AM_CommitRequestMedium9, gex_AM_CommitRequestMedium8, gex_AM_CommitRequestMedium7, gex_AM_CommitRequestMedium6, gex_AM_CommitRequestMedium5, gex_AM_CommitRequestMedium4, gex_AM_CommitRequestMedium3, gex_AM_CommitRequestMedium2, gex_AM_CommitRequestMedium1, gex_AM_CommitRequestMedium0, gasnetc_AM_too_few_arguments)(__VA_ARGS__)

/* gex_AM_CommitReplyMedium0 .. gex_AM_CommitReplyMedium16 */
GASNETT_INLINE(gex_AM_CommitReplyMedium0)
void gex_AM_CommitReplyMedium0(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes) {
    const gex_AM_Arg_t *gasnetc_a = 0;
    gasnetc_AM_Commit(sd, handler, nbytes, 0, 1, 0, gasnetc_a);
}
GASNETT_INLINE(gex_AM_CommitReplyMedium1)
void gex_AM_CommitReplyMedium1(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_AM_Arg_t a0) {
    const gex_AM_Arg_t gasnetc_a[1] = {a0};
    gasnetc_AM_Commit(sd, handler, nbytes, 0, 1, 1, gasnetc_a);
}
GASNETT_INLINE(gex_AM_CommitReplyMedium2)
void gex_AM_CommitReplyMedium2(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_AM_Arg_t a0, gex_AM_Arg_t a1) {
    const gex_AM_Arg_t gasnetc_a[2] = {a0, a1};
    gasnetc_AM_Commit(sd, handler, nbytes, 0, 1, 2, gasnetc_a);
}
GASNETT_INLINE(gex_AM_CommitReplyMedium3)
void gex_AM_CommitReplyMedium3(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2) {
    const gex_AM_Arg_t gasnetc_a[3] = {a0, a1, a2};
    gasnetc_AM_Commit(sd, handler, nbytes, 0, 1, 3, gasnetc_a);
}
GASNETT_INLINE(gex_AM_CommitReplyMedium4)
void gex_AM_CommitReplyMedium4(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3) {
    const gex_AM_Arg_t gasnetc_a[4] = {a0, a1, a2, a3};
    gasnetc_AM_Commit(sd, handler, nbytes, 0, 1, 4, gasnetc_a);
}
GASNETT_INLINE(gex_AM_CommitReplyMedium5)
void gex_AM_CommitReplyMedium5(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4) {
    const gex_AM_Arg_t gasnetc_a[5] = {a0, a1, a2, a3, a4};
    gasnetc_AM_Commit(sd, handler, nbytes, 0, 1, 5, gasnetc_a);
}
GASNETT_INLINE(gex_AM_CommitReplyMedium6)
void gex_AM_CommitReplyMedium6(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5) {
    const gex_AM_Arg_t gasnetc_a[6] = {a0, a1, a2, a3, a4, a5};
    gasnetc_AM_Commit(sd, handler, nbytes, 0, 1, 6, gasnetc_a);
}
GASNETT_INLINE(gex_AM_CommitReplyMedium7)
void gex_AM_CommitReplyMedium7(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6) {
    const gex_AM_Arg_t gasnetc_a[7] = {a0, a1, a2, a3, a4, a5, a6};
    gasnetc_AM_Commit(sd, handler, nbytes, 0, 1, 7, gasnetc_a);
}
GASNETT_INLINE(gex_AM_CommitReplyMedium8)
void gex_AM_CommitReplyMedium8(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7) {
    const gex_AM_Arg_t gasnetc_a[8] = {a0, a1, a2, a3, a4, a5, a6, a7};
    gasnetc_AM_Commit(sd, handler, nbytes, 0, 1, 8, gasnetc_a);
}
GASNETT_INLINE(gex_AM_CommitReplyMedium9)
void gex_AM_CommitReplyMedium9(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8) {
    const gex_AM_Arg_t gasnetc_a[9] = {a0, a1, a2, a3, a4, a5, a6, a7, a8};
    gasnetc_AM_Commit(sd, handler, nbytes, 0, 1, 9, gasnetc_a);
}
GASNETT_INLINE(gex_AM_CommitReplyMedium10)
void gex_AM_CommitReplyMedium10(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9) {
    const gex_AM_Arg_t gasnetc_a[10] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9};
    gasnetc_AM_Commit(sd, handler, nbytes, 0, 1, 10, gasnetc_a);
}
GASNETT_INLINE(gex_AM_CommitReplyMedium11)
void gex_AM_CommitReplyMedium11(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10) {
    const gex_AM_Arg_t gasnetc_a[11] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10};
    gasnetc_AM_Commit(sd, handler, nbytes, 0, 1, 11, gasnetc_a);
}
GASNETT_INLINE(gex_AM_CommitReplyMedium12)
void gex_AM_CommitReplyMedium12(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11) {
    const gex_AM_Arg_t gasnetc_a[12] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11};
    gasnetc_AM_Commit(sd, handler, nbytes, 0, 1, 12, gasnetc_a);
}
GASNETT_INLINE(gex_AM_CommitReplyMedium13)
void gex_AM_CommitReplyMedium13(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12) {
    const gex_AM_Arg_t gasnetc_a[13] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12};
    gasnetc_AM_Commit(sd, handler, nbytes, 0, 1, 13, gasnetc_a);
}
GASNETT_INLINE(gex_AM_CommitReplyMedium14)
void gex_AM_CommitReplyMedium14(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12, gex_AM_Arg_t a13) {
    const gex_AM_Arg_t gasnetc_a[14] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13};
    gasnetc_AM_Commit(sd, handler, nbytes, 0, 1, 14, gasnetc_a);
}
GASNETT_INLINE(gex_AM_CommitReplyMedium15)
void gex_AM_CommitReplyMedium15(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12, gex_AM_Arg_t a13, gex_AM_Arg_t a14) {
    const gex_AM_Arg_t gasnetc_a[15] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14};
    gasnetc_AM_Commit(sd, handler, nbytes, 0, 1, 15, gasnetc_a);
}
GASNETT_INLINE(gex_AM_CommitReplyMedium16)
void gex_AM_CommitReplyMedium16(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12, gex_AM_Arg_t a13, gex_AM_Arg_t a14, gex_AM_Arg_t a15) {
    const gex_AM_Arg_t gasnetc_a[16] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15};
    gasnetc_AM_Commit(sd, handler, nbytes, 0, 1, 16, gasnetc_a);
}
#define gex_AM_CommitReplyMedium(...) GASNETC_AT40(__VA_ARGS__, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gex_AM_CommitReplyMedium16, gex_AM_CommitReplyMedium15, gex_AM_CommitReplyMedium14, gex_AM_CommitReplyMedium13, gex_AM_CommitReplyMedium12, gex_AM_CommitReplyMedium11, gex_AM_CommitReplyMedium10, gex_AM_CommitReplyMedium9, gex_AM_CommitReplyMedium8, gex_AM_CommitReplyMedium7, gex_AM_CommitReplyMedium6, gex_AM_CommitReplyMedium5, gex_AM_CommitReplyMedium4, gex_AM_CommitReplyMedium3, gex_AM_CommitReplyMedium2, gex_AM_CommitReplyMedium1, gex_AM_CommitReplyMedium0, gasnetc_AM_too_few_arguments)(__VA_ARGS__)

/* gex_AM_CommitRequestLong0 .. gex_AM_CommitRequestLong16 */
GASNETT_INLINE(gex_AM_CommitRequestLong0)
void gex_AM_CommitRequestLong0(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr) {
    const gex_AM_Arg_t *gasnetc_a = 0;
    gasnetc_AM_Commit(sd, handler, nbytes, dest_addr, 2, 0, gasnetc_a);
}
GASNETT_INLINE(gex_AM_CommitRequestLong1)
void gex_AM_CommitRequestLong1(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_AM_Arg_t a0) {
    const gex_AM_Arg_t gasnetc_a[1] = {a0};
    gasnetc_AM_Commit(sd, handler, nbytes, dest_addr, 2, 1, gasnetc_a);
}
GASNETT_INLINE(gex_AM_CommitRequestLong2)
void gex_AM_CommitRequestLong2(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_AM_Arg_t a0, gex_AM_Arg_t a1) {
    const gex_AM_Arg_t gasnetc_a[2] = {a0, a1};
    gasnetc_AM_Commit(sd, handler, nbytes, dest_addr, 2, 2, gasnetc_a);
}
GASNETT_INLINE(gex_AM_CommitRequestLong3)
void gex_AM_CommitRequestLong3(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2) {
    const gex_AM_Arg_t gasnetc_a[3] = {a0, a1, a2};
    gasnetc_AM_Commit(sd, handler, nbytes, dest_addr, 2, 3, gasnetc_a);
}
GASNETT_INLINE(gex_AM_CommitRequestLong4)
void gex_AM_CommitRequestLong4(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3) {
    const gex_AM_Arg_t gasnetc_a[4] = {a0, a1, a2, a3};
    gasnetc_AM_Commit(sd, handler, nbytes, dest_addr, 2, 4, gasnetc_a);
}
GASNETT_INLINE(gex_AM_CommitRequestLong5)
void gex_AM_CommitRequestLong5(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4) {
    const gex_AM_Arg_t gasnetc_a[5] = {a0, a1, a2, a3, a4};
    gasnetc_AM_Commit(sd, handler, nbytes, dest_addr, 2, 5, gasnetc_a);
}
GASNETT_INLINE(gex_AM_CommitRequestLong6)
void gex_AM_CommitRequestLong6(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5) {
    const gex_AM_Arg_t gasnetc_a[6] = {a0, a1, a2, a3, a4, a5};
    gasnetc_AM_Commit(sd, handler, nbytes, dest_addr, 2, 6, gasnetc_a);
}
GASNETT_INLINE(gex_AM_CommitRequestLong7)
void gex_AM_CommitRequestLong7(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6) {
    const gex_AM_Arg_t gasnetc_a[7] = {a0, a1, a2, a3, a4, a5, a6};
    gasnetc_AM_Commit(sd, handler, nbytes, dest_addr, 2, 7, gasnetc_a);
}
GASNETT_INLINE(gex_AM_CommitRequestLong8)
void gex_AM_CommitRequestLong8(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7) {
    const gex_AM_Arg_t gasnetc_a[8] = {a0, a1, a2, a3, a4, a5, a6, a7};
    gasnetc_AM_Commit(sd, handler, nbytes, dest_addr, 2, 8, gasnetc_a);
}
GASNETT_INLINE(gex_AM_CommitRequestLong9)
void gex_AM_CommitRequestLong9(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8) {
    const gex_AM_Arg_t gasnetc_a[9] = {a0, a1, a2, a3, a4, a5, a6, a7, a8};
    gasnetc_AM_Commit(sd, handler, nbytes, dest_addr, 2, 9, gasnetc_a);
}
GASNETT_INLINE(gex_AM_CommitRequestLong10)
void gex_AM_CommitRequestLong10(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9) {
    const gex_AM_Arg_t gasnetc_a[10] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9};
    gasnetc_AM_Commit(sd, handler, nbytes, dest_addr, 2, 10, gasnetc_a);
}
GASNETT_INLINE(gex_AM_CommitRequestLong11)
void gex_AM_CommitRequestLong11(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10) {
    const gex_AM_Arg_t gasnetc_a[11] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10};
    gasnetc_AM_Commit(sd, handler, nbytes, dest_addr, 2, 11, gasnetc_a);
}
GASNETT_INLINE(gex_AM_CommitRequestLong12)
void gex_AM_CommitRequestLong12(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11) {
    const gex_AM_Arg_t gasnetc_a[12] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11};
    gasnetc_AM_Commit(sd, handler, nbytes, dest_addr, 2, 12, gasnetc_a);
}
GASNETT_INLINE(gex_AM_CommitRequestLong13)
void gex_AM_CommitRequestLong13(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12) {
    const gex_AM_Arg_t gasnetc_a[13] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12};
    gasnetc_AM_Commit(sd, handler, nbytes, dest_addr, 2, 13, gasnetc_a);
}
GASNETT_INLINE(gex_AM_CommitRequestLong14)
void gex_AM_CommitRequestLong14(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12, gex_AM_Arg_t a13) {
    const gex_AM_Arg_t gasnetc_a[14] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13};
    gasnetc_AM_Commit(sd, handler, nbytes, dest_addr, 2, 14, gasnetc_a);
}
GASNETT_INLINE(gex_AM_CommitRequestLong15)
void gex_AM_CommitRequestLong15(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12, gex_AM_Arg_t a13, gex_AM_Arg_t a14) {
    const gex_AM_Arg_t gasnetc_a[15] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14};
    gasnetc_AM_Commit(sd, handler, nbytes, dest_addr, 2, 15, gasnetc_a);
}
GASNETT_INLINE(gex_AM_CommitRequestLong16)
void gex_AM_CommitRequestLong16(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12, gex_AM_Arg_t a13, gex_AM_Arg_t a14, gex_AM_Arg_t a15) {
    const gex_AM_Arg_t gasnetc_a[16] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15};
    gasnetc_AM_Commit(sd, handler, nbytes, dest_addr, 2, 16, gasnetc_a);
}
#define gex_AM_CommitRequestLong(...) GASNETC_AT40(__VA_ARGS__, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gex_AM_CommitRequestLong16, gex_AM_CommitRequestLong15, gex_AM_CommitRequestLong14, gex_AM_CommitRequestLong13, gex_AM_CommitRequestLong12, gex_AM_CommitRequestLong11, gex_AM_CommitRequestLong10, gex_AM_CommitRequestLong9, gex_AM_CommitRequestLong8, gex_AM_CommitRequestLong7, gex_AM_CommitRequestLong6, gex_AM_CommitRequestLong5, gex_AM_CommitRequestLong4, gex_AM_CommitRequestLong3, gex_AM_CommitRequestLong2, gex_AM_CommitRequestLong1, gex_AM_CommitRequestLong0, gasnetc_AM_too_few_arguments)(__VA_ARGS__)

/* gex_AM_CommitReplyLong0 .. gex_AM_CommitReplyLong16 */
GASNETT_INLINE(gex_AM_CommitReplyLong0)
void gex_AM_CommitReplyLong0(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr) {
    const gex_AM_Arg_t *gasnetc_a = 0;
    gasnetc_AM_Commit(sd, handler, nbytes, dest_addr, 3, 0, gasnetc_a);
}
GASNETT_INLINE(gex_AM_CommitReplyLong1)
void gex_AM_CommitReplyLong1(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_AM_Arg_t a0) {
    const gex_AM_Arg_t gasnetc_a[1] = {a0};
    gasnetc_AM_Commit(sd, handler, nbytes, dest_addr, 3, 1, gasnetc_a);
}
GASNETT_INLINE(gex_AM_CommitReplyLong2)
void gex_AM_CommitReplyLong2(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_AM_Arg_t a0, gex_AM_Arg_t a1) {
    const gex_AM_Arg_t gasnetc_a[2] = {a0, a1};
    gasnetc_AM_Commit(sd, handler, nbytes, dest_addr, 3, 2, gasnetc_a);
}
GASNETT_INLINE(gex_AM_CommitReplyLong3)
void gex_AM_CommitReplyLong3(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2) {
    const gex_AM_Arg_t gasnetc_a[3] = {a0, a1, a2};
    gasnetc_AM_Commit(sd, handler, nbytes, dest_addr, 3, 3, gasnetc_a);
}
GASNETT_INLINE(gex_AM_CommitReplyLong4)
void gex_AM_CommitReplyLong4(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3) {
    const gex_AM_Arg_t gasnetc_a[4] = {a0, a1, a2, a3};
    gasnetc_AM_Commit(sd, handler, nbytes, dest_addr, 3, 4, gasnetc_a);
}
GASNETT_INLINE(gex_AM_CommitReplyLong5)
void gex_AM_CommitReplyLong5(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4) {
    const gex_AM_Arg_t gasnetc_a[5] = {a0, a1, a2, a3, a4};
    gasnetc_AM_Commit(sd, handler, nbytes, dest_addr, 3, 5, gasnetc_a);
}
GASNETT_INLINE(gex_AM_CommitReplyLong6)
void gex_AM_CommitReplyLong6(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5) {
    const gex_AM_Arg_t gasnetc_a[6] = {a0, a1, a2, a3, a4, a5};
    gasnetc_AM_Commit(sd, handler, nbytes, dest_addr, 3, 6, gasnetc_a);
}
GASNETT_INLINE(gex_AM_CommitReplyLong7)
void gex_AM_CommitReplyLong7(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6) {
    const gex_AM_Arg_t gasnetc_a[7] = {a0, a1, a2, a3, a4, a5, a6};
    gasnetc_AM_Commit(sd, handler, nbytes, dest_addr, 3, 7, gasnetc_a);
}
GASNETT_INLINE(gex_AM_CommitReplyLong8)
void gex_AM_CommitReplyLong8(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7) {
    const gex_AM_Arg_t gasnetc_a[8] = {a0, a1, a2, a3, a4, a5, a6, a7};
    gasnetc_AM_Commit(sd, handler, nbytes, dest_addr, 3, 8, gasnetc_a);
}
GASNETT_INLINE(gex_AM_CommitReplyLong9)
void gex_AM_CommitReplyLong9(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8) {
    const gex_AM_Arg_t gasnetc_a[9] = {a0, a1, a2, a3, a4, a5, a6, a7, a8};
    gasnetc_AM_Commit(sd, handler, nbytes, dest_addr, 3, 9, gasnetc_a);
}
GASNETT_INLINE(gex_AM_CommitReplyLong10)
void gex_AM_CommitReplyLong10(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9) {
    const gex_AM_Arg_t gasnetc_a[10] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9};
    gasnetc_AM_Commit(sd, handler, nbytes, dest_addr, 3, 10, gasnetc_a);
}
GASNETT_INLINE(gex_AM_CommitReplyLong11)
void gex_AM_CommitReplyLong11(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10) {
    const gex_AM_Arg_t gasnetc_a[11] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10};
    gasnetc_AM_Commit(sd, handler, nbytes, dest_addr, 3, 11, gasnetc_a);
}
GASNETT_INLINE(gex_AM_CommitReplyLong12)
void gex_AM_CommitReplyLong12(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11) {
    const gex_AM_Arg_t gasnetc_a[12] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11};
    gasnetc_AM_Commit(sd, handler, nbytes, dest_addr, 3, 12, gasnetc_a);
}
GASNETT_INLINE(gex_AM_CommitReplyLong13)
void gex_AM_CommitReplyLong13(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12) {
    const gex_AM_Arg_t gasnetc_a[13] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12};
    gasnetc_AM_Commit(sd, handler, nbytes, dest_addr, 3, 13, gasnetc_a);
}
GASNETT_INLINE(gex_AM_CommitReplyLong14)
void gex_AM_CommitReplyLong14(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12, gex_AM_Arg_t a13) {
    const gex_AM_Arg_t gasnetc_a[14] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13};
    gasnetc_AM_Commit(sd, handler, nbytes, dest_addr, 3, 14, gasnetc_a);
}
GASNETT_INLINE(gex_AM_CommitReplyLong15)
void gex_AM_CommitReplyLong15(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12, gex_AM_Arg_t a13, gex_AM_Arg_t a14) {
    const gex_AM_Arg_t gasnetc_a[15] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14};
    gasnetc_AM_Commit(sd, handler, nbytes, dest_addr, 3, 15, gasnetc_a);
}
GASNETT_INLINE(gex_AM_CommitReplyLong16)
void gex_AM_CommitReplyLong16(gex_AM_SrcDesc_t sd, gex_AM_Index_t handler, size_t nbytes, void *dest_addr, gex_AM_Arg_t a0, gex_AM_Arg_t a1, gex_AM_Arg_t a2, gex_AM_Arg_t a3, gex_AM_Arg_t a4, gex_AM_Arg_t a5, gex_AM_Arg_t a6, gex_AM_Arg_t a7, gex_AM_Arg_t a8, gex_AM_Arg_t a9, gex_AM_Arg_t a10, gex_AM_Arg_t a11, gex_AM_Arg_t a12, gex_AM_Arg_t a13, gex_AM_Arg_t a14, gex_AM_Arg_t a15) {
    const gex_AM_Arg_t gasnetc_a[16] = {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15};
    gasnetc_AM_Commit(sd, handler, nbytes, dest_addr, 3, 16, gasnetc_a);
}
#define gex_AM_CommitReplyLong(...) GASNETC_AT40(__VA_ARGS__, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gasnetc_AM_too_many_arguments, gex_AM_CommitReplyLong16, gex_AM_CommitReplyLong15, gex_AM_CommitReplyLong14, gex_AM_CommitReplyLong13, gex_AM_CommitReplyLong12, gex_AM_CommitReplyLong11, gex_AM_CommitReplyLong10, gex_AM_CommitReplyLong9, gex_AM_CommitReplyLong8, gex_AM_CommitReplyLong7, gex_AM_CommitReplyLong6, gex_AM_CommitReplyLong5, gex_AM_CommitReplyLong4, gex_AM_CommitReplyLong3, gex_AM_CommitReplyLong2, gex_AM_CommitReplyLong1, gex_AM_CommitReplyLong0, gasnetc_AM_too_few_arguments)(__VA_ARGS__)

/* ---- RMA and events ------------------------------------------------------- */
extern int gex_RMA_PutBlocking(gex_TM_t tm, gex_Rank_t rank, void *dest, const void *src,
                               size_t nbytes, gex_Flags_t flags);
extern int gex_RMA_PutNBI(gex_TM_t tm, gex_Rank_t rank, void *dest, const void *src, size_t nbytes,
                          gex_Event_t *lc_opt, gex_Flags_t flags);
extern gex_Event_t gex_RMA_PutNB(gex_TM_t tm, gex_Rank_t rank, void *dest, const void *src,
                                 size_t nbytes, gex_Event_t *lc_opt, gex_Flags_t flags);
extern int gex_RMA_GetBlocking(gex_TM_t tm, void *dest, gex_Rank_t rank, void *src, size_t nbytes,
                               gex_Flags_t flags);
extern int gex_RMA_GetNBI(gex_TM_t tm, void *dest, gex_Rank_t rank, void *src, size_t nbytes,
                          gex_Flags_t flags);
extern gex_Event_t gex_RMA_GetNB(gex_TM_t tm, void *dest, gex_Rank_t rank, void *src, size_t nbytes,
                                 gex_Flags_t flags);
extern int gex_Event_Test(gex_Event_t event);
extern void gex_Event_Wait(gex_Event_t event);
extern int gex_Event_TestAll(gex_Event_t *pevent, size_t numevents, gex_Flags_t flags);
extern void gex_Event_WaitAll(gex_Event_t *pevent, size_t numevents, gex_Flags_t flags);
extern int gex_Event_TestSome(gex_Event_t *pevent, size_t numevents, gex_Flags_t flags);
extern void gex_Event_WaitSome(gex_Event_t *pevent, size_t numevents, gex_Flags_t flags);
extern int gex_NBI_Test(gex_EC_t event_mask, gex_Flags_t flags);
extern void gex_NBI_Wait(gex_EC_t event_mask, gex_Flags_t flags);

/* ---- barriers --------------------------------------------------------------- */
extern gex_Event_t gex_Coll_BarrierNB(gex_TM_t tm, gex_Flags_t flags);
extern void gex_Coll_BarrierBlocking(gex_TM_t tm, gex_Flags_t flags);
extern void gasnet_barrier_notify(int id, int flags);
extern int gasnet_barrier_wait(int id, int flags);
extern int gasnet_barrier_try(int id, int flags);
extern int gasnet_barrier_result(int *id);
extern int gasnet_barrier(int id, int flags);

GASNETT_END_EXTERNC

#endif /* GASNETEX_H */
